"""``.process`` / ``.thread``: the process or thread kd switched to (samples in test_classes.py)."""

from __future__ import annotations

from kdmcp.parse import parse


def test_process_without_options() -> None:
    # "kd> .process 82c98020" in a kernel-lab write-up (stored-index file 42607048053): a complaint
    # first, then the switch and a warning after it
    out = (
        "ReadVirtual: 82c98038 not properly sign extended\n"
        "Implicit process is now 82c98020\n"
        "WARNING: .cache forcedecodeuser is not enabled\n"
    )
    r = parse(".process 82c98020", out)
    assert r.kind == "processes" and r.processes[0].address == "0x82c98020"
    assert r.processes[0].details == {}
    assert r.warnings == [
        "ReadVirtual: 82c98038 not properly sign extended",
        "WARNING: .cache forcedecodeuser is not enabled",
    ]


def test_process_i_names_no_process() -> None:
    out = "You need to continue execution (press 'g' <enter>) for the context\nto be switched.\n"
    assert parse(".process /i ffffe00012345678", out).kind == "text"
