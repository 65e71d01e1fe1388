"""Profiles: what each allows, the verdict's shape and message, and the launch flags."""

from __future__ import annotations

import pytest

from kdmcp.command import PROFILE_ALLOWS, CommandClass, Profile, check, launch_flags

PROFILES: tuple[Profile, ...] = ("read_only", "standard", "full")

# One command per class, and which profiles allow it.
SAMPLES: list[tuple[str, CommandClass, set[Profile]]] = [
    ("kb", CommandClass.READ, {"read_only", "standard", "full"}),
    ("eb @rsp 90", CommandClass.MEMORY_WRITE, {"standard", "full"}),
    ("g", CommandClass.EXECUTION, {"standard", "full"}),
    (".reboot", CommandClass.TARGET_DESTRUCTIVE, {"standard", "full"}),
    (".shell dir", CommandClass.HOST_EXEC, {"full"}),
    (".load x.dll", CommandClass.CODE_LOAD, {"full"}),
    (".dump /ma c:\\x.dmp", CommandClass.FILE_WRITE, {"full"}),
    ("q", CommandClass.SESSION_ENDING, {"full"}),
    ("frobnicate", CommandClass.UNKNOWN, {"full"}),
]

# Everyday reads an agent sends: all allowed under read_only (and so under standard).
COMMON_READS = [
    "k", "kb", "kv", "kn 20", "~*k", "r", "r rip", "dd @rsp", "dq @rsp L8", "db @rcx L40", "dps @rsp",
    "du @rcx", "da @rcx", "dt nt!_EPROCESS", "dv /t", "dx @$curprocess", "dx -r2 @$curthread.Stack.Frames",
    "u @rip", "ub @rip", "uf nt!KeBugCheckEx", "lm", "lmvm nt", "x nt!Ke*", "ln @rip", "? @rax+8",
    "?? sizeof(nt!_EPROCESS)", ".frame 2", ".trap @rsp", ".cxr @rcx", ".exr -1", ".ecxr", ".lastevent",
    "vertarget", "version", "bl", "~", "~0 s", "|", ".reload", ".reload /f nt", ".sympath", ".symfix",
    ".effmach", ".formats 10", ".echo hi", ".printf \"%p\\n\", @rip", "!process 0 0", "!thread",
    "!analyze -v", "!pcr", "!irql", "!pte @rip", "!pool @rcx", "!vm", "!object \\Driver", "!drvobj x 2",
    "!devobj @rcx", "!devstack @rcx", "!irp @rcx", "!error 5", "!peb", "!teb", "!heap -s", "!handle",
    "!running", "!ready", "!sysptes", "!locks", "!stacks 2", "!idt", "!kdexts.process 0 0",
    "s -d 0 L?100 41414141", "k; r; lm", ".block { k; r }", ".if (@rax == 0) { k } .else { r }",
]  # fmt: skip


@pytest.mark.parametrize(("command", "command_class", "allowed_by"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_profiles_allow_exactly(command: str, command_class: CommandClass, allowed_by: set[Profile]) -> None:
    for profile in PROFILES:
        verdict = check(command, profile)
        assert verdict.allowed == (profile in allowed_by), (profile, verdict.message)
        assert verdict.profile == profile
        if not verdict.allowed:
            assert verdict.denied_class is command_class
            assert verdict.denied_piece == command


def test_profile_table() -> None:
    assert PROFILE_ALLOWS["read_only"] == {CommandClass.READ}
    assert PROFILE_ALLOWS["standard"] == {
        CommandClass.READ,
        CommandClass.MEMORY_WRITE,
        CommandClass.EXECUTION,
        CommandClass.TARGET_DESTRUCTIVE,
    }
    assert PROFILE_ALLOWS["full"] == set(CommandClass)


@pytest.mark.parametrize("command", COMMON_READS)
@pytest.mark.parametrize("profile", ["read_only", "standard"])
def test_common_reads_are_allowed(command: str, profile: Profile) -> None:
    verdict = check(command, profile)
    assert verdict.allowed, verdict.message
    assert verdict.denied_class is None and verdict.denied_piece is None


def test_denied_message_names_the_piece_class_and_reason() -> None:
    verdict = check("k; .shell dir", "standard")
    assert not verdict.allowed
    assert verdict.message == (
        "denied by profile 'standard': '.shell dir' is host_exec (runs a program on the debugger host)"
    )
    assert verdict.denied_piece == ".shell dir"
    assert [f.piece for f in verdict.findings] == ["k", ".shell dir"]


def test_denied_message_names_the_worst_and_counts_the_rest() -> None:
    verdict = check("q; frobnicate; .shell dir", "read_only")
    assert verdict.denied_class is CommandClass.HOST_EXEC
    assert verdict.message.endswith("; 2 more denied finding(s)")


def test_message_escapes_control_characters_and_cuts_long_pieces() -> None:
    assert "\\x1b" in check("k\x1b", "standard").message
    verdict = check(".shell " + "x" * 500, "standard")
    assert len(verdict.message) < 300
    assert verdict.denied_piece == ".shell " + "x" * 500


def test_allowed_message() -> None:
    verdict = check("k; g", "standard")
    assert verdict.allowed
    assert verdict.message == "allowed by profile 'standard' (execution, read)"


def test_full_allows_unknown() -> None:
    assert check("${x}", "full").allowed
    assert not check("${x}", "standard").allowed


def test_unknown_profile_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown policy profile"):
        check("k", "admin")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown policy profile"):
        launch_flags("admin")  # type: ignore[arg-type]


def test_launch_flags() -> None:
    """-noshell makes kd itself refuse .shell: defence in depth unless host_exec is allowed."""
    assert launch_flags("read_only") == ["-noshell"]
    assert launch_flags("standard") == ["-noshell"]
    assert launch_flags("full") == []
