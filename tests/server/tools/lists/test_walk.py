"""walk_list's walk and its reading of dt (fast tier): every stop reason with a fake reader, the
Blink checks, and the dt lines a node's fields and links come from."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.server.tools.lists.walk import Node, _links, _paths, _value, walk

HEAD = 0x1000


def ring(*nodes: int, head: int = HEAD) -> dict[int, Node]:
    """A well-formed circular list: head -> nodes… -> head, each Blink the node before it."""
    chain = [head, *nodes, head]
    return {n: Node(flink=chain[i + 2], blink=chain[i]) for i, n in enumerate(nodes)}


def reader(nodes: dict[int, Node], log: list[int] | None = None):  # type: ignore[no-untyped-def]
    def read(node: int) -> Node | None:
        if log is not None:
            log.append(node)
        return nodes.get(node)

    return read


def test_a_ring_is_walked_once_and_stops_complete_back_at_the_head() -> None:
    nodes = ring(0x2000, 0x3000, 0x4000)
    log: list[int] = []
    done = walk(HEAD, 0x2000, 0x4000, reader(nodes, log), limit=10)
    assert done.stopped == "complete" and [n for n, _ in done.entries] == [0x2000, 0x3000, 0x4000]
    assert log == [0x2000, 0x3000, 0x4000]  # one read per node: the head's links were given
    assert done.bad_blinks == {} and done.bad_head_blink is None and done.next is None


def test_an_empty_list_points_at_itself() -> None:
    done = walk(HEAD, HEAD, HEAD, reader({}), limit=10)
    assert done.stopped == "complete" and done.entries == []


def test_limit_stops_with_the_flink_not_followed() -> None:
    nodes = ring(0x2000, 0x3000, 0x4000)
    done = walk(HEAD, 0x2000, 0x4000, reader(nodes), limit=2)
    assert done.stopped == "limit" and len(done.entries) == 2 and done.next == 0x4000
    # a list exactly as long as the limit is complete: back at the head before a third read
    assert walk(HEAD, 0x2000, 0x4000, reader(nodes), limit=3).stopped == "complete"


def test_a_node_seen_twice_that_is_not_the_head_is_a_loop() -> None:
    nodes = ring(0x2000, 0x3000, 0x4000)
    nodes[0x4000] = Node(flink=0x3000, blink=0x3000)  # the tail points back into the list
    done = walk(HEAD, 0x2000, 0x4000, reader(nodes), limit=100)
    assert done.stopped == "loop" and done.next == 0x3000 and len(done.entries) == 3


def test_an_unreadable_node_is_a_row_and_the_end_of_the_walk() -> None:
    nodes = ring(0x2000, 0x3000)
    del nodes[0x3000]
    done = walk(HEAD, 0x2000, 0x3000, reader(nodes), limit=100)
    assert done.stopped == "unreadable" and done.entries[-1] == (0x3000, None) and len(done.entries) == 2


def test_a_flink_of_zero_stops_null() -> None:
    nodes = ring(0x2000)
    nodes[0x2000] = Node(flink=0, blink=HEAD)
    assert walk(HEAD, 0x2000, 0x2000, reader(nodes), limit=100).stopped == "null"
    assert walk(HEAD, 0, 0, reader({}), limit=100).stopped == "null"  # the head's own Flink


def test_a_blink_that_does_not_point_back_is_flagged_on_its_entry() -> None:
    nodes = ring(0x2000, 0x3000, 0x4000)
    nodes[0x3000] = Node(flink=0x4000, blink=0x9999)
    done = walk(HEAD, 0x2000, 0x5000, reader(nodes), limit=100)
    assert done.stopped == "complete" and done.bad_blinks == {1: 0x9999}
    assert done.bad_head_blink == 0x5000  # the head's Blink is not the last node (0x4000)


def test_cancellation_ends_the_walk() -> None:
    nodes = ring(0x2000, 0x3000)
    assert walk(HEAD, 0x2000, 0x3000, reader(nodes), limit=100, cancelled=lambda: True).entries == []


# ------------------------------------------------------------------------- dt's lines


def test_a_node_read_gives_its_links_and_fields_as_dt_printed_them() -> None:
    out = (
        "   +0x440 UniqueProcessId    : 0x00000000`00000004 Void\n"
        "   +0x448 ActiveProcessLinks : _LIST_ENTRY [ 0xffffe70f`28b0e4c8 - 0xfffff800`6321e0f0 ]\n"
        '   +0x5a8 ImageFileName      : [15]  "System"\n'
    )
    record = parse("dt nt!_EPROCESS 0xffffe70f28a7d040 ActiveProcessLinks UniqueProcessId ImageFileName", out)
    found = _paths(list(record.fields))  # type: ignore[union-attr]
    assert _links(found["ActiveProcessLinks"][1]) == (0xFFFFE70F28B0E4C8, 0xFFFFF8006321E0F0)
    assert _value(found["ImageFileName"][1]) == "System"
    assert _value(found["UniqueProcessId"][1]) == "0x0000000000000004"


def test_a_dotted_path_sums_the_nested_offsets() -> None:
    out = (
        "   +0x000 Tcb                 : \n"
        "      +0x2f8 ThreadListEntry     : _LIST_ENTRY\n"
        "   +0x478 Cid                 : \n"
        "      +0x008 UniqueThread        : Ptr64 Void\n"
    )
    found = _paths(list(parse("dt nt!_ETHREAD Tcb.ThreadListEntry Cid.UniqueThread", out).fields))  # type: ignore[union-attr]
    assert found["Tcb.ThreadListEntry"][0] == 0x2F8 and found["Cid.UniqueThread"][0] == 0x480


def test_links_are_read_when_dt_prints_no_value_at_all() -> None:
    # only structures chosen: the parse layer sees a layout and keeps the links in the type
    out = (
        "   +0x000 Pcb                : _KPROCESS\n"
        "   +0x448 ActiveProcessLinks : _LIST_ENTRY [ 0xffffe70f`28b0e4c8 - 0xfffff800`6321e0f0 ]\n"
    )
    found = _paths(list(parse("dt nt!_EPROCESS 0xffffe70f28a7d040 ActiveProcessLinks Pcb", out).fields))  # type: ignore[union-attr]
    assert _links(found["ActiveProcessLinks"][1]) == (0xFFFFE70F28B0E4C8, 0xFFFFF8006321E0F0)
    assert _links(found["Pcb"][1]) is None
