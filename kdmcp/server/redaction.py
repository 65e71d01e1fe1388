"""The server's secret store and every way its output is masked: text, results, transcript lines, byte ranges.

One ``Redactor`` per server: whatever leaves it — a tool result, a progress message, a log
line, a transcript record, a window of a session's stored output — is masked here, by value,
against every KDNET key and listener token the server knows (the rules: ``kdmcp/secret.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from kdmcp.secret import Secret, SecretSet
from kdmcp.server.transcript import FIELD_LIMIT


class Redactor:
    """The secrets this server knows, and the masking of everything it serves."""

    def __init__(self, secrets: Iterable[Secret] = ()) -> None:
        # Declared secret fields only: config connection keys (validated KdnetKey), listener tokens.
        self.secrets = SecretSet(secrets)

    def remember(self, secret: Secret) -> None:
        """Mask ``secret`` from now on. Only for values of declared secret fields, validated first
        (a KDNET key, a listener token): anything a caller merely names ``key`` must never get here,
        or one call could mask ordinary text in every client's results. Shorter than any declared
        field allows raises ``ValueError``."""
        self.secrets.add(secret)

    @property
    def context_bytes(self) -> int:
        """How many trailing bytes of a live stream may still be the start of a secret."""
        return self.secrets.context_bytes

    def text(self, text: str) -> str:
        return self.secrets.text(text)

    def transcript_line(self, line: str) -> str:
        """A transcript line (JSON), masked leaf by leaf so no secret can break it; a field the
        transcript capped at ``FIELD_LIMIT`` may end inside a key, so its tail is judged as cut."""
        return self.secrets.json_text(line, cut_length=FIELD_LIMIT)

    def model(self, model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
        """The model as served JSON data — nulls, defaults and empty lists left out — with every
        known secret masked, by value, in every string of it.

        Masked leaf by leaf, not as JSON text: a secret holding a quote cannot break the result.
        Fields the model declares ``MASKED`` (text ``byte_range`` already masked against the
        whole store) are not masked a second time: one pass over every outgoing byte. ``exclude``:
        fields left out of the dump.
        """
        data = model.model_dump(mode="json", exclude_none=True, exclude_defaults=True, exclude=exclude)
        # a class attribute: read on the class, as an instance's missing attribute costs pydantic an exception
        premasked = {name: data.pop(name) for name in getattr(type(model), "MASKED", ()) if name in data}
        masked: dict[str, Any] = self.secrets.data(data)
        masked.update(premasked)
        return masked

    def byte_range(
        self, read: Callable[[int, int], bytes], size: int, offset: int, end: int, *, final: bool
    ) -> tuple[str, int]:
        """Stored bytes ``[offset, end)`` as text with every byte of every known secret masked, and
        where to read next.

        The store keeps raw bytes, and kd prints the key (``version`` echoes its command line).
        Each window is judged against the whole store (``size`` bytes), not against itself or an
        ``output_id``'s end: a key the window only starts, ends or sits inside is still recognised,
        and its share of the window masked (``SecretSet.byte_range``). Unless ``final`` (nothing
        more will arrive), the store's last bytes that begin a key are held back until the rest does.
        """
        return self.secrets.byte_range(read, size, offset, end, final=final)
