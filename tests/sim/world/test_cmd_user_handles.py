"""cdb's ``!handle`` on the simulated live process (kdmcp/sim/world/cmd_user_handles.py) through
``answer(world, cmd, kernel=False)``: every form parses to the handle record, the counts are the
table's, and the Mutant's owner and the Thread handles are the process's own threads."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim.world.cmd_user_handles import process_handles
from kdmcp.sim.world.user import build_user
from tests.sim.world.test_cmd_user import PID, ask


def test_handle_forms_on_the_live_process() -> None:
    world = build_user(0, PID, "")
    table = process_handles(world)
    every = parse("!handle 0 f", ask(world, "!handle 0 f"))
    assert isinstance(every, ObjectRecord) and len(every.handles) == len(table)
    assert every.fields["handle_total"] == str(len(table))
    assert sum(t.count for t in every.handle_types) == len(table)
    mutant = parse("!handle 60 f", ask(world, "!handle 60 f"))
    assert isinstance(mutant, ObjectRecord) and mutant.handles[0].type == "Mutant"
    # its owner is the process's main thread, by the ids ~ prints
    main = world.processes[0].threads[0]
    assert mutant.handles[0].owner == f"{PID:x}.{main.tid:x}" and mutant.handles[0].state == "Owned"
    files = ask(world, "!handle 0 0 File")
    assert files == f"{sum(h.type == 'File' for h in table)} handles of type File\n"
    threads = parse("!handle 0 3 Thread", ask(world, "!handle 0 3 Thread"))
    assert isinstance(threads, ObjectRecord) and len(threads.handles) == len(world.processes[0].threads)
