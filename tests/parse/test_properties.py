"""Properties: ``parse`` never raises and never loses text, whatever it is fed.

Inputs are arbitrary text, invalid UTF-8 decoded with ``errors="replace"``, and - the
interesting case - shuffled, truncated and mangled lines of real debugger output fed to
every family parser.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from kdmcp.parse import RECORD_KINDS, Record, parse, parse_transcript
from tests.parse.samples.corpus import CORPUS_DIR, FAMILY_INDEX
from tests.tiers import examples

# One command per family (and some that route nowhere).
COMMANDS = [
    "",
    "k",
    "kb",
    "kP",
    "~*k",
    "r",
    "rM 0x04",
    "~0s",
    "lm",
    "lmv",
    "!process 0 7",
    "~",
    "!thread",
    "!running",
    "!runaway 7",
    "!stacks 2",
    "!analyze -v",
    "db rip",
    "dd rsp",
    "dqs rsp",
    "da x",
    "dt nt!_PEB 7ffdf000",
    "dv",
    "dx @$curprocess",
    "u rip",
    "uf nt!Foo",
    "bl",
    "vertarget",
    ".exr -1",
    "!error 5",
    "?",
    ".formats 1",
    "x nt!*",
    ".sympath",
    ".reload",
    "!irp 1",
    "!drvobj x 2",
    "!devobj x",
    "!devstack x",
    "!object \\",
    "!pool x",
    "!poolused",
    "!pte x",
    "!peb",
    "!handle 0 4",
    "!heap -p -a x",
    "g",
    ".echo hi",
]

# Lines of real output from every family (and the noise around them).
REAL_LINES = [
    "0:000> kb",
    " # Child-SP          RetAddr           : Args to Child                                                           : Call Site",  # noqa: E501 - real output line, kept whole
    "00 00000000`001ff260 00000000`77732ef5 : 00000000`00000000 00000000`777d5468 00000000`00000000 00000000`00000004 : ntdll!LdrpDoDebuggerBreak+0x30",  # noqa: E501 - real output line, kept whole
    "01 (Inline Function) --------`-------- Wdf01000!FxDriverDeviceAdd::Invoke+0x30 [d:\\x\\fx.hpp @ 61]",
    "(Inline) --------     -------- -------- -------- Freeimage_test!FreeImage_test+0x13",
    "00 0133fb7c 00891145 00000001 00000004 0133fd4c Project1!AddValues1 (FPO: [Non-Fpo]) (CONV: cdecl)",
    "... : nt!DbgBreakPointWithStatus ...",
    "00 0012fe80 0040150e MyApp!main(",
    "rax=ffffffff00000080 rbx=0000000000000000 rcx=ffffa68337cb7028",
    " r8=ffffffffffffffff  r9=0000000000000000 r10=7ffffffffffffffc",
    "iopl=0         nv up ei ng nz na pe nc",
    "cs=0010  ss=0018  ds=0000  es=0000  fs=0000  gs=0000             efl=00010282",
    "fpcw=027F: rn 53 puozdi  fpsw=0000: top=0 cc=0000 --------  fptw=FFFF",
    "nt!RtlSubtreePredecessor+0x9:",
    "fffff802`40d322f9 488b4810        mov     rcx,qword ptr [rax+10h] ds:ffffffff`00000090=????????????????",
    "   13 fffff800`64521020 4889542410      mov     qword ptr [rsp+10h],rdx",
    "start             end                 module name",
    "fffff801`63ec0000 fffff801`649a7000   nvlddmkm T (no symbols)           ",
    "    Image path: \\SystemRoot\\system32\\DRIVERS\\nvlddmkm.sys",
    "Unloaded modules:",
    "PROCESS ffff9189527e9080",
    "    SessionId: 2  Cid: 1e90    Peb: bb6f2ac000  ParentCid: 15e8",
    "    DirBase: 1d822d000  ObjectTable: ffffd80249eb8040  HandleCount: 817.",
    "        THREAD ffff91895309d080  Cid 1e90.1e94  Teb: 000000bb6f2ad000 Win32Thread: ffff9189523d0fc0 WAIT: (UserRequest) UserMode Non-Alertable",  # noqa: E501 - real output line, kept whole
    ".  0  Id: 7a0.5ac Suspend: 1 Teb: 7ffdf000 Unfrozen",
    "      Start: ntdll!DbgUiRemoteBreakin (76fcec3b) ",
    "DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)",
    "Arguments:",
    "Arg1: ffffd8024aaa8010, memory referenced",
    "STACK_TEXT:  ",
    "KEY_VALUES_STRING: 1",
    "    Key  : AV.Type",
    "    Value: Read",
    "FAILURE_BUCKET_ID:  AV_myfault!unknown_function",
    "00000000`7777cb60  cc eb 00 48 83 c4 38 c3-90 90 90 90 90 90 90 90  ...H..8.........",
    "fffff801`9210b880  fffff801`9203b470 nt!KiServiceTable",
    "003b:00000030  7ffdf000 00000000 00000000 00000000",
    '00000000`031e92c8  "Reflective Dll Injection"',
    "   +0x00c Ldr              : 0x77c08880 _PEB_LDR_DATA",
    "     0 e Disable Clear  00007ff6`8402c0f8     0001 (0001)  0:**** notepad!wWinMain",
    "Windows 10 Kernel Version 9926 MP (4 procs) Free x64",
    "Kernel base = 0xfffff801`8d283000 PsLoadedModuleList = 0xfffff801`8d58aef0",
    "ExceptionAddress: 000000007777cb60 (ntdll!LdrpDoDebuggerBreak+0x0000000000000030)",
    "   ExceptionCode: 80000003 (Break instruction exception)",
    ">[  3,34]  40 e1 828517a8 00000000 842511e0-00000000 Success Error Cancel pending",
    "[00] IRP_MJ_CREATE                      fffff80117b49a20             portcls!DispatchCreate",
    "*e1001050 size:   10 previous size:   10  (Allocated) *ObDi",
    " ohci        1      136         0        01394 OHCI host controller driver ",
    "(336c.264c): Break instruction exception - code 80000003 (first chance)",
    "ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\\WINDOWS\\System32\\IMM32.DLL",
    "*** WARNING: Unable to verify checksum for foo.dll",
    "             ^ Quotes required in 'ea eip helloworld'",
    "Couldn't resolve error at 'foo'",
    "",
    "...",
    "[--SNIP--]",
]


# The family samples (fixtures/corpus/families/): each family's commands and the lines of its
# samples, so every family the typed tools stand on is fed its own real output, mangled.
FAMILY_SAMPLES: dict[str, tuple[list[str], list[str]]] = {}
for _entry in FAMILY_INDEX:
    _commands, _lines = FAMILY_SAMPLES.setdefault(_entry["family"], ([], []))
    if _entry["command"] not in _commands:
        _commands.append(_entry["command"])
    _text = (CORPUS_DIR / _entry["file"]).read_bytes().decode("utf-8", errors="replace")
    _lines.extend(line for line in _text.splitlines() if line.strip() and line not in _lines)
COMMANDS.extend(sorted({c for commands, _ in FAMILY_SAMPLES.values() for c in commands} - set(COMMANDS)))

# built once: a TypeAdapter of the whole union costs milliseconds, and the property runs 300 times
ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)


def _check(command: str, text: str) -> Record:
    record = parse(command, text)
    assert record.raw == text
    assert record.kind in RECORD_KINDS
    # the safety net in parse() must not be what kept us alive: family parsers are total
    assert not any(w.startswith("parser error") for w in record.warnings), record.warnings
    return record


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(COMMANDS), st.text())
def test_arbitrary_text_never_raises_nor_loses_text(command: str, text: str) -> None:
    _check(command, text)


@settings(max_examples=examples(150), deadline=None)
@given(st.text(max_size=40), st.text())
def test_arbitrary_command_never_raises(command: str, text: str) -> None:
    _check(command, text)


def _mangled(lines: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(lines),
        st.sampled_from(lines).flatmap(lambda line: st.integers(0, len(line)).map(lambda n: line[:n])),
        st.sampled_from(lines).flatmap(
            lambda line: st.tuples(st.integers(0, len(line)), st.text(max_size=5)).map(
                lambda t: line[: t[0]] + t[1] + line[t[0] :]
            )
        ),
    )


_mangled_line = _mangled(REAL_LINES)


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(COMMANDS), st.binary(max_size=2000))
def test_invalid_utf8_decoded_with_replace(command: str, data: bytes) -> None:
    _check(command, data.decode("utf-8", errors="replace"))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(COMMANDS), st.lists(_mangled_line, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_mangled_real_output_never_raises(command: str, lines: list[str], eol: str) -> None:
    text = eol.join(lines)
    record = _check(command, text)
    # every record survives a JSON round trip through the discriminated union
    again = ADAPTER.validate_json(ADAPTER.dump_json(record))
    assert again == record


@st.composite
def _family_output(draw: st.DrawFn) -> tuple[str, str]:
    """A family, one of its commands, and its samples' lines shuffled, cut and mangled."""
    family = draw(st.sampled_from(sorted(FAMILY_SAMPLES)))
    commands, lines = FAMILY_SAMPLES[family]
    command = draw(st.sampled_from(commands))
    body = draw(st.lists(_mangled(lines), max_size=30))
    return command, draw(st.sampled_from(["\n", "\r\n"])).join(body)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_family_output())
def test_mangled_family_output_never_raises_nor_loses_text(case: tuple[str, str]) -> None:
    command, text = case
    record = _check(command, text)
    assert ADAPTER.validate_json(ADAPTER.dump_json(record)) == record


def test_every_family_is_fed_to_the_properties() -> None:
    assert len(FAMILY_SAMPLES) >= 12, sorted(FAMILY_SAMPLES)
    assert all(commands and lines for commands, lines in FAMILY_SAMPLES.values())


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.one_of(_mangled_line, st.text(max_size=30)), max_size=25))
def test_transcript_blocks_concatenate_to_input(lines: list[str]) -> None:
    text = "\n".join(lines)
    blocks = parse_transcript(text)
    assert "".join(b.source for b in blocks) == text
    for b in blocks:
        assert b.record.raw == b.output


@settings(max_examples=examples(300), deadline=None)
@given(_mangled_line)
def test_fast_frame_path_agrees_with_general_reader(line: str) -> None:
    from kdmcp.parse.frames import FRAME_RE, _fast_frame, frame_fields
    from kdmcp.parse.models import Frame

    fast = _fast_frame(line.strip())
    if fast is None:
        return
    m = FRAME_RE.match(line.strip())
    assert m is not None
    slow = frame_fields(m)
    assert slow is not None
    assert Frame.model_validate(fast) == Frame.model_validate(slow)


def test_pathological_inputs_stay_linear() -> None:
    """Long blank runs and repeated tokens must not trigger regex backtracking blow-ups
    (a lazy ``.*?\\s*$`` tail or adjacent optional blanks are quadratic or worse)."""
    import time

    n = 20_000
    inputs = [
        "a" + " " * n + "b",
        "\t" * n + "x",
        "^" + " " * n + "x",
        "00 nt!f" + " " * n + "x",
        "A_" * (n // 2),
        "a=1" * (n // 3),
        "ffffffff`ffffffff " * (n // 18) + "x",
        "(" * n,
        "x" + " @ " * (n // 3),
    ]
    start = time.perf_counter()
    for text in inputs:
        for command in [*COMMANDS, "~*k", "kP"]:
            parse(command, text)
    # about 0.3 s on the development VM; a quadratic pattern takes minutes
    assert time.perf_counter() - start < 20
