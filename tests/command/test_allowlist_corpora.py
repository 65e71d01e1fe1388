"""The allowlist measured by its corpora (issue 28): attacks denied, everyday and real commands allowed.

Three corpora, each in its own data module:

- ``corpus_attacks.py``: every base line in every wrapper kd runs a command from, denied under
  ``read_only`` and ``standard`` for its class (or, for a hidden run effect, denied or reported
  with that effect by ``run_effect``);
- ``corpus_everyday.py``: >= 150 commands kernel and user-mode debuggers type daily, each allowed
  under ``standard``;
- ``fixtures/commands/prompt_commands.json``: every command typed at a prompt in the real
  transcripts (``fixtures/corpus`` and the released sets), allowed under ``standard`` unless it is
  listed below with the class it is denied for and why.

``test_*_summary`` state the whole count in one assertion each (how many attacks get through,
by class and wrapper; how many ordinary commands are falsely denied), so a run shows where the
policy stands at a glance; the per-line tests say which line and why.
"""

from __future__ import annotations

import functools
import json
import runpy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kdmcp.command import PROFILE_ALLOWS, CommandClass, Profile, RunEffect, check, run_effect
from tests.command import corpus
from tests.command.corpus_attacks import ATTACKS, BASES, EXTENSION_PREFIXES, LATER_WRAPPERS, WRAPPERS, Attack, Base
from tests.command.corpus_everyday import EVERYDAY, PUB, TRANSCRIPTS

C = CommandClass
REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "fixtures" / "commands" / "prompt_commands.json"
DENYING: tuple[Profile, ...] = ("read_only", "standard")
_ID = 56  # characters of a line shown in a test id

# ------------------------------------------------------------------ the transcripts' justified exceptions

# Typed in a real transcript, and denied under ``standard`` for a class ``standard`` must deny.
TRANSCRIPT_DENIED: dict[str, tuple[frozenset[CommandClass], str]] = {
    ".load pykd": (frozenset({C.CODE_LOAD}), "loads the pykd extension DLL into the debugger"),
    "!pykd.load": (frozenset({C.CODE_LOAD}), "loads pykd by its module name"),
    "!py SimpleHTTPServer": (
        frozenset({C.CODE_LOAD, C.UNKNOWN}),
        "pykd runs a Python module in the debugger (an extension no table lists)",
    ),
    r".scriptload C:\WinDbg\Scripts\TestScript.js": (frozenset({C.CODE_LOAD}), "loads and runs a JavaScript file"),
    'dx @$getEnvVar("tmp")': (
        frozenset({C.CODE_LOAD, C.UNKNOWN}),
        "calls a function a loaded script registered: script code runs in the debugger",
    ),
    'dx -g @$scriptContents.AllExportCalls("symsrv")': (
        frozenset({C.CODE_LOAD, C.UNKNOWN}),
        "calls a loaded script's function",
    ),
    "dx -r3 @$scriptContents.stackRoot": (
        frozenset({C.CODE_LOAD, C.UNKNOWN}),
        "reads a loaded script's property: a getter is script code",
    ),
    "qq": (frozenset({C.SESSION_ENDING}), "quits the debugger (stop_kd is the door)"),
    '? $spat( "${AliasName}", "*name*" )': (
        frozenset({C.UNKNOWN}),
        "expands an alias an earlier call defined: its value is not known to the policy",
    ),
    "(0x88-0x70)": (frozenset({C.UNKNOWN}), "not a command: kd answered 'Syntax error' in the transcript"),
}

# The author's note pasted onto the prompt line (kd never saw it): either reading is right.
TRANSCRIPT_ANNOTATED: dict[str, str] = {
    ".exr fe40cd88             first DWORD is the exception record": "an explanation after the address",
    "dt nt!_KPRCB ffffa68161edc180 ClockOwner ThreadDpcEnable MHz // PRCB address of processor 1": (
        "a // comment after the field names"
    ),
}

# ------------------------------------------------------------------ helpers


def _denied_classes(line: str, profile: Profile) -> set[CommandClass] | None:
    """The classes of the denied findings of ``line`` under ``profile``, or None when it is allowed."""
    verdict = check(line, profile)
    if verdict.allowed:
        return None
    allowed = PROFILE_ALLOWS[profile]
    return {f.command_class for f in verdict.findings if f.command_class not in allowed}


@functools.cache
def _attack_failure(attack: Attack) -> str | None:
    """Why ``attack`` gets through, or None when every profile that must stop it does."""
    if attack.effect is not None:
        if check(attack.line, "read_only").allowed:
            return "allowed under read_only (it runs the target)"
        if check(attack.line, "standard").allowed and run_effect(attack.line) is not attack.effect:
            return f"allowed under standard with run effect {run_effect(attack.line).value}, not {attack.effect.value}"
        return None
    for profile in DENYING:
        if attack.denied in PROFILE_ALLOWS[profile]:
            continue  # e.g. memory_write: only read_only must refuse it
        denied = _denied_classes(attack.line, profile)
        if denied is None:
            return f"allowed under {profile}"
        if not denied & attack.classes:
            names = ", ".join(sorted(c.value for c in denied))
            return f"denied under {profile} as {names}, not {'/'.join(sorted(c.value for c in attack.classes))}"
    return None


def _expected(base: Base) -> str:
    return base.denied.value if base.denied is not None else f"runs:{base.effect.value if base.effect else ''}"


def _id(text: str) -> str:
    return text if len(text) <= _ID else text[: _ID - 3] + "..."


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["commands"]
    return rows


def _transcript_commands() -> list[str]:
    return list(dict.fromkeys(row["command"] for row in _rows()))


def _extract(root: Path) -> list[dict[str, Any]]:
    """The rows ``scripts/extract_prompt_commands.py`` extracts from ``root`` (``fixtures/corpus``)."""
    script = runpy.run_path(str(REPO_ROOT / "scripts" / "extract_prompt_commands.py"))
    rows: list[dict[str, Any]] = script["extract"](root, script["LOCAL"])
    return rows


# ------------------------------------------------------------------ attacks


_ATTACKS_BY_BASE: dict[int, list[Attack]] = {}
for _attack in ATTACKS:
    _ATTACKS_BY_BASE.setdefault(id(_attack.base), []).append(_attack)


@pytest.mark.parametrize(
    "base",
    [pytest.param(b, id=f"{i:03d}:{_expected(b)}:{_id(b.line)}") for i, b in enumerate(BASES)],
)
def test_attack_is_denied_in_every_wrapper(base: Base) -> None:
    """Bare, in a block, a branch, per thread, in a loop, at a breakpoint or event, at every prompt."""
    failures = [
        f"{a.wrapper}{'/' + a.prefix if a.prefix else ''}: {a.line!r}: {why}"
        for a in _ATTACKS_BY_BASE[id(base)]
        if (why := _attack_failure(a)) is not None
    ]
    assert not failures, f"{len(failures)} form(s) get through ({base.source}):\n" + "\n".join(failures)


def test_attacks_summary() -> None:
    """Every attack stopped: the counts of those that get through, by class and by wrapper."""
    through = [a for a in ATTACKS if _attack_failure(a) is not None]
    by_class = Counter(_expected(a.base) for a in through)
    by_wrapper = Counter(a.wrapper + (f"/{a.prefix}" if a.prefix else "") for a in through)
    totals = Counter(_expected(a.base) for a in ATTACKS)
    table = "\n".join(f"  {name}: {by_class[name]} of {totals[name]}" for name in sorted(totals))
    wrappers = "\n".join(f"  {name}: {n}" for name, n in sorted(by_wrapper.items()))
    assert not through, (
        f"{len(through)} of {len(ATTACKS)} attack lines get through\nby class:\n{table}\nby wrapper:\n{wrappers}"
    )


def test_attack_corpus_is_new() -> None:
    """None of these lines is in the denylist's corpus or among the lines to allow, and none repeats."""
    old = {line for line, _ in corpus.BYPASS} | set(corpus.ORDINARY) | {line for line, *_ in corpus.BYPASS_VERDICTS}
    lines = [a.line for a in ATTACKS]
    assert not set(lines) & old
    must_allow = {c for c, _ in EVERYDAY} | (set(_transcript_commands()) - set(TRANSCRIPT_DENIED))
    assert not set(lines) & must_allow
    assert len(set(lines)) == len(lines)
    assert len({b.line for b in BASES}) == len(BASES)


def test_attack_corpus_covers_issue_28() -> None:
    """Every class the issue names, each in every wrapper, extensions behind both prefixes."""
    denied = Counter(b.denied for b in BASES if b.denied is not None)
    for cls in (C.FILE_WRITE, C.NETWORK_PATH, C.HOST_FILE_READ, C.CODE_LOAD, C.SETTINGS_CHANGE, C.MEMORY_WRITE):
        assert denied[cls] >= 3, cls
    assert sum(1 for b in BASES if b.effect is RunEffect.RESUMES) >= 10
    lines = {b.line for b in BASES}
    for named in (
        r"!chkimg -mmw c:\temp\chk.log rSewo nt",
        r".sympath \??\GLOBALROOT\Device\Mup\h\s",
        r".srcpath \??\GLOBALROOT\??\UNC\h\s",
        r".lsrcpath \Device\LanmanRedirector\h\s",
        r".exepath \\?\GLOBALROOT\??\UNC\h\s",
        'dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:\\\\x.h", "nt")',
        'dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:/x.h", "nt")',
        'dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:\\x.h", "nt")',
        "dx @$name(1, 2)",
        r"!analyze /xmf c:\x.xml",
        r"!analyze -c /load c:\ki.xml",
        "!chkimg /f nt",
        "aS .echo r",
        "aS lm g",
        "aS k gh",
        ".pcmd -s g",
        "pa(nt!NtCreateFile)",
        "ta@$ra",
        "pc(1)",
        "n 8",
        "n 0n10",
        ".extmatch /e evil.dll *",
    ):
        assert named in lines, named
    for base in BASES:
        forms = {(a.wrapper, a.prefix) for a in _ATTACKS_BY_BASE[id(base)]}
        wrappers = set(WRAPPERS) - (LATER_WRAPPERS if base.effect is not None else set())
        prefixes = {""}
        if base.line.startswith("!") and "." not in base.line.split(" ", 1)[0]:
            prefixes |= set(EXTENSION_PREFIXES)
        assert forms == {(w, p) for w in wrappers for p in prefixes}, base.line
        assert base.source, base.line
        assert "'" not in base.line, "the j wrapper quotes with '"


# ------------------------------------------------------------------ everyday commands


@pytest.mark.parametrize(("command", "source"), [pytest.param(c, s, id=_id(c)) for c, s in EVERYDAY])
def test_everyday_command_is_allowed(command: str, source: str) -> None:
    verdict = check(command, "standard")
    assert verdict.allowed, f"{verdict.message} (from {source})"


def test_everyday_summary() -> None:
    denied = [(c, check(c, "standard").message) for c, _ in EVERYDAY if not check(c, "standard").allowed]
    assert not denied, f"{len(denied)} of {len(EVERYDAY)} everyday commands denied:\n" + "\n".join(
        f"  {c!r}: {m}" for c, m in denied
    )


def test_everyday_corpus_shape_and_citations() -> None:
    """>= 150 distinct commands; a transcript cited must hold the command at a prompt."""
    commands = [c for c, _ in EVERYDAY]
    assert len(commands) >= 150
    assert len(set(commands)) == len(commands)
    prompts: dict[str, set[str]] = {}
    for row in _rows():
        prompts.setdefault(f"{row['collection']}/{row['file']}", set()).add(row["command"])
    for command, source in EVERYDAY:
        assert source.startswith(("https://learn.microsoft.com/", PUB, *TRANSCRIPTS)), source
        if source.startswith(PUB):
            assert source.split("(", 1)[1].rstrip(")").split("> ", 1)[1].startswith(command.split("=")[0]), source
        if source.startswith(TRANSCRIPTS):
            assert command in prompts.get(source, set()), (command, source)
    kernel = {"!process 0 0", "!thread", "!pool @rcx", "!irp @rdx 1", "!pte @rip", "!drvobj \\Driver\\mydrv 2"}
    user = {"!heap -s", "!peb", "!teb", "!gle", "~*k", ".ecxr", "!address -summary"}
    assert kernel <= set(commands) and user <= set(commands)


# ------------------------------------------------------------------ the real transcripts


@functools.cache
def _transcript_failure(command: str) -> str | None:
    """Why ``command`` fails: falsely denied, or an exception allowed or denied for another class."""
    verdict = check(command, "standard")
    if command in TRANSCRIPT_DENIED:
        classes, why = TRANSCRIPT_DENIED[command]
        denied = _denied_classes(command, "standard")
        if denied is None:
            return f"allowed, but must be denied: {why}"
        if not denied & classes:
            return f"{verdict.message}; expected {'/'.join(sorted(c.value for c in classes))}: {why}"
        return None
    if command in TRANSCRIPT_ANNOTATED and not verdict.allowed and verdict.denied_class is not C.UNKNOWN:
        return f"{verdict.message} ({TRANSCRIPT_ANNOTATED[command]}: allowed or unknown)"
    if command not in TRANSCRIPT_ANNOTATED and not verdict.allowed:
        return verdict.message
    return None


@pytest.mark.parametrize("command", [pytest.param(c, id=_id(c)) for c in _transcript_commands()])
def test_transcript_command(command: str) -> None:
    """Allowed under standard, or denied for the class its exception names."""
    failure = _transcript_failure(command)
    assert failure is None, failure


def test_transcript_summary() -> None:
    failures = [(c, why) for c in _transcript_commands() if (why := _transcript_failure(c)) is not None]
    assert not failures, f"{len(failures)} of {len(_transcript_commands())} transcript commands fail:\n" + "\n".join(
        f"  {c!r}: {why}" for c, why in failures
    )


def test_transcript_exceptions_are_in_the_transcripts() -> None:
    """Every exception names a command that is really there (a stale entry would hide nothing)."""
    commands = set(_transcript_commands())
    assert set(TRANSCRIPT_DENIED) <= commands
    assert set(TRANSCRIPT_ANNOTATED) <= commands


def test_fixture_matches_fixtures_corpus() -> None:
    """The fixture's fixtures/corpus part is what the extractor finds there now, row for row."""
    fresh = _extract(REPO_ROOT / "fixtures" / "corpus")
    stored = [row for row in _rows() if row["collection"] == "fixtures/corpus"]
    assert stored == fresh


def test_fixture_shape() -> None:
    """Every row attributed; both released sets present (they cannot be re-read from a clean clone)."""
    rows = _rows()
    per = Counter(row["collection"] for row in rows)
    assert set(per) == {"fixtures/corpus", "corpus-released/set1", "corpus-released/set2"}
    assert per["corpus-released/set2"] == 58  # one prompt line per set2 file (its README)
    assert all(row["command"] and row["command"] == row["command"].strip() for row in rows)
    assert all(row["source"] and row["file"].endswith(".txt") and row["line"] >= 1 for row in rows)
    assert all(row["prompt"].endswith(">") and row["mode"] in {"kernel", "local_kernel", "user"} for row in rows)
    assert {row["mode"] for row in rows} == {"kernel", "local_kernel", "user"}
    assert len({row["command"] for row in rows}) >= 300


def test_fixture_readme_counts() -> None:
    """fixtures/commands/README.md says how many rows and distinct commands the fixture holds."""
    readme = (FIXTURE.parent / "README.md").read_text(encoding="utf-8")
    rows = _rows()
    assert f"{len(rows)} rows, {len({row['command'] for row in rows})} distinct commands" in readme
