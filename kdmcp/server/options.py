"""How a server was started (``ServerOptions``), and the demo target ``--simulate`` falls back to."""

from __future__ import annotations

from dataclasses import dataclass, field

from kdmcp.config import Config
from kdmcp.secret import Secret
from kdmcp.server.clients import ClientRegistry
from kdmcp.server.registry import all_tools
from kdmcp.statefile import KdSessionState

# The simulator's default target accepts any well-formed key; this one is for demos only.
DEMO_KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"


@dataclass
class ServerOptions:
    """How this server was started."""

    config: Config
    config_path: str | None = None
    simulate: bool = False
    scenario: str | None = None  # simulator scenario file (with simulate)
    # HTTP listener clients (None on stdio, where the one client is whoever started us).
    clients: ClientRegistry | None = None
    # The tools a stdio client may use (--tools); listener clients carry their own.
    tools: frozenset[str] = field(default_factory=all_tools)
    transcript: str | None = None  # JSONL transcript path (--transcript / KDMCP_TRANSCRIPT)
    # Send structuredContent (the whole typed result) beside the text: for programs
    # (--structured / KDMCP_STRUCTURED=1); a model reads the one text block (docs/results.md).
    structured: bool = False


def demo_state() -> KdSessionState:
    """The state file ``--simulate`` uses when none is given: the simulator's own target."""
    return KdSessionState(
        schema="winrm-kd-session-v1",
        guest_host="127.0.0.2",
        host_ip="127.0.0.1",
        port=50000,
        key=Secret(DEMO_KEY),
        created_by="kd-mcp --simulate",
    )
