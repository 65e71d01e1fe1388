"""Who may call the HTTP listener: per-client bearer tokens, tool surfaces and policies.

A token comes from ``KDMCP_LISTEN_TOKEN`` (one client, ``default``) or a token file with one
entry per client — ``{name: {token, tools, policy}}`` — never from the command line, where
any local user could read it in the process list. Tokens are ``Secret``s and are compared in
constant time against every entry, so response timing says nothing about which one was close.
"""

from __future__ import annotations

import hmac
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import ConfigDict, Field, ValidationError

from kdmcp.errors import ConfigError
from kdmcp.secret import Secret
from kdmcp.server.registry import ALL_GROUPS, tools_for
from kdmcp.validation import LazyModel, validation_problems

ENV_TOKEN = "KDMCP_LISTEN_TOKEN"  # noqa: S105 (a variable name)
ENV_TOKEN_FILE = "KDMCP_TOKEN_FILE"  # noqa: S105 (a variable name)
MIN_TOKEN_CHARS = 16
Profile = Literal["read_only", "standard", "full"]


@dataclass(frozen=True)
class ListenerClient:
    name: str
    token: Secret
    tools: frozenset[str]
    policy: Profile


class _Entry(LazyModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    token: str = Field(min_length=MIN_TOKEN_CHARS)
    tools: list[str] = Field(default_factory=lambda: list(ALL_GROUPS))
    policy: Profile = "standard"


class ClientRegistry:
    """The listener's clients, matched by bearer token."""

    def __init__(self, clients: list[ListenerClient]) -> None:
        if not clients:
            raise ConfigError("no listener clients: give a token")
        self.clients = clients

    @property
    def secrets(self) -> list[Secret]:
        return [c.token for c in self.clients]

    def match(self, token: str | None) -> ListenerClient | None:
        """The client whose token this is. Every entry is compared, in constant time."""
        if not token:
            return None
        found: ListenerClient | None = None
        given = token.encode()
        for client in self.clients:
            if hmac.compare_digest(given, client.token.reveal().encode()):
                found = client
        return found

    def match_headers(self, headers: Mapping[str, str] | None) -> ListenerClient | None:
        return self.match(bearer_token(headers))


def bearer_token(headers: Mapping[str, str] | None) -> str | None:
    if not headers:
        return None
    value = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def load_clients(
    token_file: str | None, env: Mapping[str, str] | None = None, default_policy: Profile = "standard"
) -> tuple[ClientRegistry, list[str]]:
    """The registry from a token file (argument, else ``$KDMCP_TOKEN_FILE``) or ``$KDMCP_LISTEN_TOKEN``.

    Returns the registry and warnings (a token file others can read). Raises ``ConfigError``
    when there is no token at all: the listener must not start open.
    """
    environ = os.environ if env is None else env
    path = token_file or environ.get(ENV_TOKEN_FILE)
    warnings: list[str] = []
    if path:
        return _from_file(Path(path), warnings), warnings
    token = environ.get(ENV_TOKEN, "")
    if not token:
        raise ConfigError(
            f"the HTTP listener needs a token: set {ENV_TOKEN}, or give a token file (--token-file or "
            f"{ENV_TOKEN_FILE}) with entries {{name: {{token, tools, policy}}}}. Tokens are never taken "
            "from the command line."
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{ENV_TOKEN} is shorter than {MIN_TOKEN_CHARS} characters: use a random token")
    client = ListenerClient("default", Secret(token), tools_for(ALL_GROUPS), default_policy)
    return ClientRegistry([client]), warnings


def _from_file(path: Path, warnings: list[str]) -> ClientRegistry:
    try:
        text = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(f"token file {path}: cannot read it ({exc.strerror})", file_problem=True) from None
    if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
        warnings.append(f"token file {path} is readable by other users: chmod 600 it")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ConfigError(f"token file {path}: not valid YAML") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"token file {path}: expected a mapping of client names to {{token, tools, policy}}")
    clients: list[ListenerClient] = []
    for name, raw in data.items():
        try:
            entry = _Entry.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc, top="entry"))
            raise ConfigError(f"token file {path}: client {name!r}: {problems}") from None
        try:
            tools = tools_for(entry.tools)
        except Exception as exc:
            raise ConfigError(f"token file {path}: client {name!r}: {exc}") from None
        clients.append(ListenerClient(str(name), Secret(entry.token), tools, entry.policy))
    tokens = [c.token.reveal() for c in clients]
    if len(set(tokens)) != len(tokens):
        raise ConfigError(f"token file {path}: two clients share a token")
    return ClientRegistry(clients)
