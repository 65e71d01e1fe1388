"""``kdmcp.parse.datamodel``: ``dx``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.parse.samples.corpus import Corpus


def _memory_13(c: Corpus) -> None:
    assert c.block("memory/13.txt", "dx @$curprocess.COM").prompt.machine == "x86"
    r = c.record("memory/13.txt", "dx @$curprocess.COM.GlobalObjects")
    assert r.kind == "data_model"
    assert r.expression == "@$curprocess.COM.GlobalObjects"
    assert len(r.children) == 10
    assert (r.children[0].name, r.children[0].value, r.children[0].type) == ("[0x100]", "0x12f4fb0", "IUnknown *")


def _memory_14(c: Corpus) -> None:
    r = c.record("memory/14.txt", "dx -r1 @$curprocess.TTD.Events")
    assert len(r.children) == 17
    assert r.children[8].value == "Exception 0xC0000005 of type Hardware at PC: 0X52005400200045"


def _exceptions_errors_12(c: Corpus) -> None:
    r = c.record("exceptions_errors/12.txt", "dx -r1 Debugger.Sessions[0].Processes[1428].Threads")
    assert len(r.children) == 5
    assert r.children[0].value == "<Unable to get stack trace>" and r.children[0].links == ["Switch To"]
    assert r.children[2].value == "nt!KiSwapContext+0x76 (fffff806`4466a186)"


def _tree(r: object) -> list[tuple[int, str | None, str | None, str | None]]:
    return [(e.depth, e.name, e.value, e.type) for e in r.children]  # type: ignore[attr-defined]


def _dx_01(c: Corpus) -> None:
    # children whose value is empty ("Display          : ") are kept, with no value
    r = c.record("families/dx/01.txt", "dx -r1 Debugger.Settings")
    assert (r.expression, r.value) == ("Debugger.Settings", None)
    assert [(e.name, e.value) for e in r.children] == [
        ("Display", None),
        ("EngineInitialization", None),
        ("Extensions", None),
        ("Input", None),
        ("Sources", None),
        ("Symbols", None),
        ("AutoSaveSettings", "false"),
    ]


def _dx_02(c: Corpus) -> None:
    # two blanks a level: session [0] > Processes > ten processes, then the "..." continuation
    r = c.record("families/dx/02.txt", "dx -r3 Debugger.Sessions")
    assert r.expression == "Debugger.Sessions"
    tree = _tree(r)
    assert tree[0] == (1, "[0]", "Remote KD: KdSrv:Server=@{<Local>},Trans=@{1394:Channel=0}", None)
    assert tree[1] == (2, "Processes", None, None)
    procs = tree[2:12]
    assert [(d, n) for d, n, _, _ in procs][:3] == [(3, "[0]"), (3, "[4]"), (3, "[304]")]
    assert [v for _, _, v, _ in procs][2:] == [
        "smss.exe",
        "csrss.exe",
        "wininit.exe",
        "csrss.exe",
        "services.exe",
        "lsass.exe",
        "winlogon.exe",
        "svchost.exe",
    ]
    assert tree[12][:2] == (3, "...") and len(tree) == 13


def _dx_03(c: Corpus) -> None:
    expression = "Debugger.Sessions.First().Processes.First().Threads.First().Stack.Frames"
    r = c.record("families/dx/03.txt", f"dx -r1 {expression}")
    assert r.expression == expression
    assert r.value is None and len(r.children) == 9
    assert (r.children[0].name, r.children[0].value) == ("[0x0]", "nt!RtlpBreakWithStatusInstruction")
    assert (r.children[8].name, r.children[8].value) == ("[0x8]", "nt!KiIdleLoop + 0x1a")
    assert {e.depth for e in r.children} == {1}


def _dx_04(c: Corpus) -> None:
    # EnvironmentBlock and some of its fields print no ": value", only a type
    r = c.record("families/dx/04.txt", "dx -r2 @$curthread.Environment")
    assert (r.expression, r.value, r.type) == ("@$curthread.Environment", None, None)
    tree = _tree(r)
    assert len(tree) == 17
    assert tree[0] == (1, "EnvironmentBlock", None, "_TEB")
    assert tree[1] == (2, "[+0x000] NtTib", None, "_NT_TIB")
    assert tree[2] == (2, "[+0x038] EnvironmentPointer", "Unable to read memory at Address 0x38", None)
    assert tree[11] == (2, "[+0x080] User32Reserved", None, "unsigned long [26]")
    assert tree[15] == (2, "[+0x10c] FpSoftwareStatusRegister", "Unable to read memory at Address 0x10c", None)
    assert tree[16][:2] == (2, "...")


def _dx_05(c: Corpus) -> None:
    # bit-field names hold a colon inside their brackets: "[+0x003 ( 0: 0)] ImageUsesLargePages"
    r = c.record("families/dx/05.txt", "dx -r2 @$curprocess.Environment")
    tree = _tree(r)
    assert len(tree) == 19 and tree[0] == (1, "EnvironmentBlock", None, "_PEB")
    bits = [n for _, n, _, _ in tree if "( " in n]
    assert len(bits) == 8
    assert bits[0] == "[+0x003 ( 0: 0)] ImageUsesLargePages"
    assert bits[7] == "[+0x003 ( 7: 7)] IsLongPathAwareProcess"
    assert tree[5] == (2, "[+0x003 ( 0: 0)] ImageUsesLargePages", "Unable to read memory at Address 0x3", None)
    assert tree[13] == (2, "[+0x004] Padding0", None, "unsigned char [4]")
    assert all(d == 2 for d, _, _, _ in tree[1:])


def _dx_06(c: Corpus) -> None:
    # handle entries that print nothing but their index
    r = c.record("families/dx/06.txt", "dx -r1 @$curprocess.Io.Handles")
    assert r.expression == "@$curprocess.Io.Handles"
    assert _tree(r) == [
        (1, "[0x8]", None, None),
        (1, "[0xc]", None, None),
        (1, "[0x10]", None, None),
        (1, "[0x14]", None, None),
        (1, "[0x18]", None, None),
        (1, "...", None, None),
    ]


def _dx_07(c: Corpus) -> None:
    r = c.record("families/dx/07.txt", "dx -r2 @$curprocess.Io.Handles.First()")
    tree = _tree(r)
    assert len(tree) == 29
    assert tree[0] == (1, "Handle", "0x8", None)
    assert tree[3] == (1, "Object", None, "_OBJECT_HEADER")
    assert tree[4] == (2, "[+0x000] PointerCount", "228806", "__int64")
    assert tree[7] == (2, "[+0x010] Lock", None, "_EX_PUSH_LOCK")
    assert tree[15] == (2, "[+0x01b ( 1: 1)] KernelObject", "0x1", "unsigned char")
    assert tree[23] == (2, "[+0x020] ObjectCreateInfo", "0xfffff801f6d9c6c0", "_OBJECT_CREATE_INFORMATION *")
    assert tree[26] == (2, "[+0x030] Body", None, "_QUAD")
    assert tree[28] == (2, "UnderlyingObject", "Unexpected failure to dereference object", None)


def _dx_08(c: Corpus) -> None:
    r = c.record("families/dx/08.txt", "dx greeting")
    assert (r.expression, r.value, r.type) == ("greeting", "{ size=50 }", "std::array<wchar_t, 50>")
    assert _tree(r) == [(1, "[<Raw View>]", None, "std::array<wchar_t, 50>")]


def _dx_09(c: Corpus) -> None:
    # the pointee of a pointer, printed without a name column: kept as a child
    r = c.record("families/dx/09.txt", "dx @$csp")
    assert (r.expression, r.value, r.type) == ("@$csp", "0x61887cf898 : 0x89", "unsigned char *")
    assert _tree(r) == [(1, "0x89", None, "unsigned char")]


def _dx_10(c: Corpus) -> None:
    r = c.record("families/dx/10.txt", 'dx @$getEnvVar("tmp")')
    assert (r.expression, r.value) == ('@$getEnvVar("tmp")', None)
    assert _tree(r) == [(1, "[0x0]", "TMP=C:\\Users\\tmisiak\\AppData\\Local\\Temp", None)]


def _dx_11(c: Corpus) -> None:
    # three levels of a JavaScript object: ReadFile > 5 callers > their callers
    r = c.record("families/dx/11.txt", "dx -r3 @$scriptContents.stackRoot")
    assert (r.expression, r.value) == ("@$scriptContents.stackRoot", "undefined - 0")
    tree = _tree(r)
    assert len(tree) == 14
    assert tree[0] == (1, "KERNELBASE!ReadFile", "KERNELBASE!ReadFile - 173", None)
    assert [n for d, n, _, _ in tree if d == 2] == [
        "ucrtbase!_read_nolock",
        "shcore!CFileStream::Read",
        "msvcrt!read_nolock",
        "dbghelp!IStreamFileWinAPI::Read",
        "dbgeng!ReadImageData",
    ]
    assert tree[2] == (3, "ucrtbase!_read", "ucrtbase!_read - 2", None)
    assert tree[13] == (3, "dbgeng!IMAGE_HEADER_INFO::ReadDebugDir", "dbgeng!IMAGE_HEADER_INFO::ReadDebugDir - 4", None)


def _dx_12(c: Corpus) -> None:
    # dx -g: five rows, each a child with its twelve cells one level down
    r = c.record("families/dx/12.txt", 'dx -g @$scriptContents.AllExportCalls("symsrv")')
    assert r.expression == '@$scriptContents.AllExportCalls("symsrv")'
    rows = [e for e in r.children if e.depth == 1]
    assert [e.name for e in rows] == ["[0x0]", "[0x1]", "[0x2]", "[0x3]", "[0x4]"]
    assert len(r.children) == 5 * 13
    first = {e.name: e.value for e in r.children[1:13]}
    assert first == {
        "EventType": "0x0",
        "ThreadId": "0x8610",
        "UniqueThreadId": "0x2",
        "TimeStart": "10A0BD:77",
        "TimeEnd": "10A0BF:BC",
        "Function": "symsrv!SymbolServerSetOptionsW",
        "FunctionAddress": "0x7ffa9d5627c0",
        "ReturnAddress": "0x7ffa340b876a",
        "ReturnValue": "1",
        "Parameters": "{...}",
        "SystemTimeStart": "Thursday, September 15, 2022 23:17:59.836",
        "SystemTimeEnd": "Thursday, September 15, 2022 23:17:59.836",
    }
    last = {e.name: e.value for e in r.children[53:65]}
    assert last["Function"] == "symsrv!SymbolServerGetOptionData"
    assert (last["TimeEnd"], last["ReturnValue"]) == ("10A0D1:0", "0")


def _dx_13(c: Corpus) -> None:
    # the list heads Threads / Modules / Environment print no value and stay children
    r = c.record("families/dx/13.txt", "dx @$curprocess")
    assert (r.expression, r.value) == ("@$curprocess", "cmd.exe")
    assert [(e.name, e.value) for e in r.children] == [
        ("Name", "cmd.exe"),
        ("Id", "0x874"),
        ("Threads", None),
        ("Modules", None),
        ("Environment", None),
    ]
    assert {e.depth for e in r.children} == {1}


def _dx_14(c: Corpus) -> None:
    name = "families/dx/14.txt"
    r = c.record(name, "dx Debugger.State.DebuggerVariables")
    assert r.expression == "Debugger.State.DebuggerVariables" and r.value is None
    assert [(e.name, e.value, e.links) for e in r.children] == [
        ("cursession", "Live user mode: <Local>", []),
        ("curprocess", "cmd.exe", ["Switch To"]),
        ("curthread", "ntdll!DbgUiRemoteBreakin (00007ffc`98675320)", ["Switch To"]),
        ("scripts", None, []),
        ("scriptContents", "[object Object]", []),
        ("vars", None, []),
        ("curstack", None, []),
        ("curframe", "ntdll!DbgBreakPoint", ["Switch To"]),
    ]
    v = c.record(name, "dx Debugger.State.DebuggerVariables.vars")
    assert _tree(v) == [(1, "doare", "Diary of a reverse-engineer", None)]


def _dx_15(c: Corpus) -> None:
    name = "families/dx/15.txt"
    a = c.record(name, 'dx @$doare = "Diary of a reverse-engineer"')
    assert (a.expression, a.value) == ('@$doare = "Diary of a reverse-engineer"', "Diary of a reverse-engineer")
    assert _tree(a) == [(1, "Length", "0x1b", None)]
    b = c.record(name, 'dx "Hello, " + @$doare')
    assert (b.expression, b.value) == ('"Hello, " + @$doare', "Hello, Diary of a reverse-engineer")
    assert _tree(b) == [(1, "Length", "0x22", None)]


def _dx_16(c: Corpus) -> None:
    where = "@$curprocess.Modules.Where(p => @rip >= p.BaseAddress && @rip < (p.BaseAddress+p.Size))[8]"
    r = c.record("families/dx/16.txt", f"dx -r1 {where}")
    assert (r.expression, r.value) == (where, "C:\\WINDOWS\\SYSTEM32\\ntdll.dll")
    assert _tree(r) == [
        (1, "BaseAddress", "0x7ffc985a0000", None),
        (1, "Name", "C:\\WINDOWS\\SYSTEM32\\ntdll.dll", None),
        (1, "Size", "0x1db000", None),
    ]


def _dx_17(c: Corpus) -> None:
    # four top-level objects, three of them list heads, each with its children one level down
    r = c.record("families/dx/17.txt", "dx -r2 Debugger")
    assert (r.expression, r.value) == ("Debugger", None)
    tops = [(e.name, e.value) for e in r.children if e.depth == 1]
    assert tops == [("Sessions", "[object Object]"), ("Settings", None), ("State", None), ("Utility", None)]
    assert len(r.children) == 20
    assert r.children[1].value == "Remote KD: KdSrv:Server=@{<Local>},Trans=@{NET:Port=50000,Key=1.2.3.4,Target}"
    settings = [e.name for e in r.children[3:11]]
    assert settings == [
        "Debug",
        "Display",
        "EngineInitialization",
        "Extensions",
        "Input",
        "Sources",
        "Symbols",
        "AutoSaveSettings",
    ]
    assert (r.children[10].depth, r.children[10].value) == (2, "false")
    assert [(e.depth, e.name, e.value) for e in r.children[17:]] == [
        (2, "Collections", None),
        (2, "Control", None),
        (2, "Objects", None),
    ]


def _dx_18(c: Corpus) -> None:
    # x86 TTD walkthrough: a function pointer, its pointee's type on a line of its own (no name)
    r = c.record("families/dx/18.txt", "dx &DisplayGreeting!GetCppConGreeting")
    assert (r.expression, r.value) == ("&DisplayGreeting!GetCppConGreeting", "0xb61720")
    assert r.type == "void (__cdecl*)(wchar_t *,unsigned int)"
    assert _tree(r) == [(1, None, None, "void __cdecl(wchar_t *,unsigned int)")]


def _dx_19(c: Corpus) -> None:
    # the head echoes the collection with a blank inside ("..., \"rw\")") and no value; eleven
    # index-only children and dx's "..." cut, all padded with trailing blanks
    command = 'dx -r1 @$cursession.TTD.Memory(0xddf800,0xddf804, "rw")'
    r = c.record("families/dx/19.txt", command)
    assert (r.expression, r.value, r.type) == ('@$cursession.TTD.Memory(0x1bf7d0,0x1bf7d4, "rw")', None, None)
    assert [e.name for e in r.children] == [f"[{i:#x}]" for i in range(11)] + ["..."]
    assert all((e.depth, e.value, e.type) == (1, None, None) for e in r.children)


def _dx_20(c: Corpus) -> None:
    command = 'dx -r1 @$cursession.TTD.Memory(0xddf800,0xddf804, "rw")[5]'
    r = c.record("families/dx/20.txt", command)
    assert (r.expression, r.value) == ('@$cursession.TTD.Memory(0xddf800,0xddf804, "rw")[5]', None)
    fields = {e.name: e.value for e in r.children}
    assert len(r.children) == 10 and all(e.depth == 1 for e in r.children)
    assert fields["EventType"] == "MemoryAccess" and fields["AccessType"] == "Write"
    assert (fields["ThreadId"], fields["UniqueThreadId"]) == ("0x710", "0x2")
    assert fields["TimeStart"] == fields["TimeEnd"] == "27:3C1 [Time Travel]"
    assert (fields["IP"], fields["Address"], fields["Size"], fields["Value"]) == (
        "0x6900432f",
        "0xddf800",
        "0x4",
        "0xddf818",
    )


def _dx_21(c: Corpus) -> None:
    r = c.record("families/dx/21.txt", "dx &greeting")
    assert (r.expression, r.value, r.type) == ("&greeting", "0xddf800", "std::array<wchar_t,50> *")
    assert _tree(r) == [(1, "[+0x000] _Elems", '"\uaf58\u68f6\u6a99\u779d???"', "wchar_t [50]")]


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/dx/01.txt": _dx_01,
    "families/dx/02.txt": _dx_02,
    "families/dx/03.txt": _dx_03,
    "families/dx/04.txt": _dx_04,
    "families/dx/05.txt": _dx_05,
    "families/dx/06.txt": _dx_06,
    "families/dx/07.txt": _dx_07,
    "families/dx/08.txt": _dx_08,
    "families/dx/09.txt": _dx_09,
    "families/dx/10.txt": _dx_10,
    "families/dx/11.txt": _dx_11,
    "families/dx/12.txt": _dx_12,
    "families/dx/13.txt": _dx_13,
    "families/dx/14.txt": _dx_14,
    "families/dx/15.txt": _dx_15,
    "families/dx/16.txt": _dx_16,
    "families/dx/17.txt": _dx_17,
    "families/dx/18.txt": _dx_18,
    "families/dx/19.txt": _dx_19,
    "families/dx/20.txt": _dx_20,
    "families/dx/21.txt": _dx_21,
    "memory/13.txt": _memory_13,
    "memory/14.txt": _memory_14,
    "exceptions_errors/12.txt": _exceptions_errors_12,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
