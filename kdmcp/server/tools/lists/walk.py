"""``walk_list``: the entries of a ``LIST_ENTRY`` list, read node by node with ``dt``.

kd's ``dt -l`` walks a list too, but it cannot say why it stopped or mark a node it could not
read, and a corrupt list (a loop, a node that does not point back) is exactly when a kernel
engineer walks one. So the walk is ours (``walk``, pure: it takes a ``read(node)`` callable,
tested without a debugger) and each node costs one command:

* ``dt TYPE LINK FIELD…`` (no address): the link field's offset, and that every field exists
  (kd: ``Cannot find specified field members.``) -- ``+0x448 ActiveProcessLinks : _LIST_ENTRY``;
  a dotted path (``Pcb.ThreadListHead``) sums the offsets of its parts, as dt nests them.
* ``dp HEAD L2``: the head's address, Flink and Blink in one line
  (``fffff800`6321e0f0  ffffe70f`28a7d488 ffffe70f`2e61b4c8``; ``??`` where unreadable).
* per node, ``dt TYPE ENTRY LINK FIELD…`` (ENTRY = node - offset): the chosen fields and the
  link field's own ``_LIST_ENTRY [ 0xflink - 0xblink ]``, so the next node needs no other read;
  kd's ``Memory read error 0000…`` (or no link line at all) makes the node unreadable.

Every argument that reaches kd's command line is checked: the head is a ``args.Address``; the
type one ``module!name`` word without wildcards (``dt nt!*`` would list types); a field a dotted
path of identifiers. Lengths the patterns leave open are bounded by the engine's command line
(``MAX_COMMAND_BYTES``). What kd refuses (an unknown type, field or head) is ``typed.refusal``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.lists.models import ListEntry, StopReason, WalkListResult

if TYPE_CHECKING:
    from kdmcp.parse.models.data import TypeField

__all__ = ["Node", "Walk", "walk", "walk_list"]

# a field or a dotted path to one (Tcb.ThreadListEntry): letters, digits, '_' and '.', nothing kd reads otherwise
FieldPath = Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]{0,127}$")]
_MASK = (1 << 64) - 1
# dt's summary of an embedded list entry: "_LIST_ENTRY [ 0xffffe70f`28b0e4c8 - 0xfffff800`6321e0f0 ]"
_LINKS_RE = re.compile(r"\[ (0x[0-9a-fA-F`]+) - (0x[0-9a-fA-F`]+) \]")
# dt's char array: '[15]  "System"' (ImageFileName): the string, unquoted
_CHARS_RE = re.compile(r'^\[\d+\]\s+"(?P<text>.*)"$')


@dataclass(frozen=True)
class Node:
    """One node as read: its links and the chosen fields (name -> value as dt printed it)."""

    flink: int
    blink: int
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class Walk:
    entries: list[tuple[int, Node | None]]  # (node address, what was read; None: unreadable)
    stopped: StopReason
    next: int | None = None
    bad_head_blink: int | None = None  # complete: the head's Blink where it is not the last node
    bad_blinks: dict[int, int] = field(default_factory=dict)  # index -> a Blink not pointing back


def walk(
    head: int,
    flink: int,
    blink: int,
    read: Callable[[int], Node | None],
    limit: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> Walk:
    """Follow Flinks from the head's (``flink``) until back at ``head``, a Flink of 0, a node seen
    before, an unreadable node or ``limit`` nodes read; each node's Blink is checked against the
    node before it (the head for the first), the head's ``blink`` against the last."""
    entries: list[tuple[int, Node | None]] = []
    bad: dict[int, int] = {}
    seen: set[int] = set()
    prev, nxt = head, flink
    while True:
        if nxt == 0:
            return Walk(entries, "null", bad_blinks=bad)
        if nxt == head:
            return Walk(entries, "complete", bad_head_blink=blink if blink != prev else None, bad_blinks=bad)
        if nxt in seen:
            return Walk(entries, "loop", next=nxt, bad_blinks=bad)
        # a cancelled call's result reaches no one (call.invoke abandons it): stopping is what matters
        if len(entries) >= limit or cancelled():
            return Walk(entries, "limit", next=nxt, bad_blinks=bad)
        seen.add(nxt)
        node = read(nxt)
        entries.append((nxt, node))
        if node is None:
            return Walk(entries, "unreadable", bad_blinks=bad)
        if node.blink != prev:
            bad[len(entries) - 1] = node.blink
        prev, nxt = nxt, node.flink


# ------------------------------------------------------------------------- reading kd's dt


def _paths(fields: list[TypeField]) -> dict[str, tuple[int, TypeField]]:
    """dt's (possibly nested) field lines by dotted path, each with its offset from the type's
    start: a nested line's offset is relative to the structure above it (``+0x000 Pcb`` then
    ``+0x030 ThreadListHead``: Pcb.ThreadListHead at 0x30)."""
    out: dict[str, tuple[int, TypeField]] = {}
    stack: list[tuple[str, int]] = []
    for f in fields:
        del stack[f.depth :]
        base = stack[-1][1] if stack else 0
        offset = base + (int(f.offset, 16) if f.offset else 0)
        stack.append((f.name, offset))
        out[".".join(s[0] for s in stack)] = (offset, f)
    return out


def _value(f: TypeField) -> str:
    """A field's value as dt printed it: the value, else what follows the type (a list entry's
    links, a string), else the type (an embedded structure); a char array's string unquoted."""
    text = f.value or f.preview or f.type or ""
    m = _CHARS_RE.match(text)
    return m.group("text") if m else text


def _links(f: TypeField) -> tuple[int, int] | None:
    m = _LINKS_RE.search(" ".join(p for p in (f.type, f.value, f.preview) if p))
    if m is None:
        return None
    return int(m.group(1).replace("`", ""), 16), int(m.group(2).replace("`", ""), 16)


@tool("inspect", reads("Walk a list"))
def walk_list(
    call: Call,
    head: Annotated[Address, Field()],
    type: Annotated[str, Field(pattern=r"^\w+(!\w+)?$")],
    link_field: Annotated[FieldPath, Field(description='ActiveProcessLinks')],
    fields: Annotated[list[FieldPath] | None, Field(description='ImageFileName', max_length=16)] = None,
    limit: Annotated[int, Field(ge=1, le=1024)] = 256,
    session_id: SessionId = None,
) -> WalkListResult:
    """Walk a LIST_ENTRY list, reading fields."""
    call.progress(f"walking {type}.{link_field}")
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    chosen = [f for f in dict.fromkeys(fields or []) if f != link_field]
    names = " ".join([link_field, *chosen])
    layout = ran.record(f"dt {type} {names}")
    # kd: "Symbol nt!_X not found." (an error record), "Cannot find specified field members." (text)
    if not isinstance(layout, parsing.TypeDumpRecord) or not layout.fields:
        raise typed.refusal(ran, layout)
    paths = _paths(layout.fields)
    missing = [f for f in [link_field, *chosen] if f not in paths]
    if missing:
        raise InvalidArgument(f"{type} has no field {', '.join(missing)}", session_id=ran.session.session_id)
    offset, link = paths[link_field]
    if not (link.type or "").startswith("_LIST_ENTRY"):
        raise InvalidArgument(
            f"{type}.{link_field} is {link.type or 'not a field'}, not a _LIST_ENTRY",
            session_id=ran.session.session_id,
        )

    top = ran.record(f"dp {head} L2", show=False)
    rows = top.rows if isinstance(top, parsing.MemoryRecord) else []
    values = [v for r in rows for v in r.values]
    if not rows or len(values) < 2:  # kd: "Couldn't resolve error at 'nt!X'", or no head read
        raise typed.refusal(ran, top)
    head_at = int(rows[0].address, 16)

    def read(node: int) -> Node | None:
        entry = (node - offset) & _MASK
        record = ran.record(f"dt {type} 0x{entry:x} {names}", show=False)
        found = _paths(record.fields if isinstance(record, parsing.TypeDumpRecord) else [])
        links = _links(found[link_field][1]) if link_field in found else None
        if links is None:
            return None
        return Node(links[0], links[1], {f: _value(found[f][1]) for f in chosen if f in found})

    if any(set(v) <= {"?"} for v in values[:2]):  # kd could not read the head itself
        done = Walk([], "unreadable")
    else:
        done = walk(head_at, int(values[0], 16), int(values[1], 16), read, limit, call.cancel.is_set)
    entries = [
        ListEntry(
            index=i,
            entry=f"0x{(node - offset) & _MASK:016x}",
            fields=n.fields if n else {},
            unreadable=n is None,
            bad_blink=f"0x{done.bad_blinks[i]:016x}" if i in done.bad_blinks else None,
        )
        for i, (node, n) in enumerate(done.entries)
    ]
    return typed.serve(
        ran,
        WalkListResult,
        head=f"0x{head_at:016x}",
        link_offset=f"0x{offset:x}",
        stopped=done.stopped,
        next=f"0x{done.next:016x}" if done.next is not None else None,
        bad_head_blink=f"0x{done.bad_head_blink:016x}" if done.bad_head_blink is not None else None,
        round_trips=len(ran.outputs),
        entries=entries,
    )
