"""World x, ln, lm, ?, .formats, .sympath, .reload: from the world's modules and symbol table.

The lm forms are held to the canned default target's texts they replace (git c564865,
kdmcp/sim/data/default_kd.yaml), modelled on corpus modules/01, 04, 05, 06 and 09; x on
families/types_symbols/06 and 09; ln on the published DML form; .formats on published x64 kd
output and corpus misc/03; ? on corpus misc/10; .sympath on corpus misc/01.
"""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run

NT_PDB = "C:\\ProgramData\\Dbg\\sym\\ntkrnlmp.pdb\\3844DBB920174967BE7AA4A2C20430FA1\\ntkrnlmp.pdb"


def test_x_names_nt_create_file_inside_nts_lm_range(world: World) -> None:
    out = run(world, "x nt!NtCreateFile")
    assert out == "fffff800`62c3a1e0 nt!NtCreateFile (<no parameter info>)\n"
    sym = parse("x nt!NtCreateFile", out).symbols[0]
    assert (sym.name, sym.address, sym.signature) == ("nt!NtCreateFile", "0xfffff80062c3a1e0", "(<no parameter info>)")
    nt = parse("lm m nt", run(world, "lm m nt")).modules[0]
    assert int(nt.start, 16) <= int(sym.address, 16) < int(nt.end, 16)
    ln = parse("ln", run(world, f"ln {sym.address}"))
    exact = [s for s in ln.symbols if s.exact]
    assert [s.name for s in exact] == ["nt!NtCreateFile"]
    assert run(world, "? nt!NtCreateFile").endswith("= fffff800`62c3a1e0\n")


def test_x_wildcards_and_verbose(world: World) -> None:
    names = [s.name for s in parse("x", run(world, "x nt!Nt*File")).symbols]
    assert set(names) >= {"nt!NtCreateFile", "nt!NtReadFile", "nt!NtWriteFile", "nt!NtDeviceIoControlFile"}
    assert all(n.startswith("nt!Nt") and n.endswith("File") for n in names)
    v = run(world, "x /v nt!NtCreateFile")
    assert v == "pub func   fffff800`62c3a1e0   90 nt!NtCreateFile (<no parameter info>)\n"
    rec = parse("x /v nt!NtCreateFile", v).symbols[0]
    assert (rec.kind, rec.size) == ("pub func", "90")
    assert run(world, "x nt!NoSuchRoutine*") == ""
    data = run(world, "x nt!PsActiveProcessHead")
    assert data.endswith(" nt!PsActiveProcessHead = <no type information>\n")
    assert run(world, "x /2 nt!NtCreateFile") == "fffff800`62c3a1e0 nt!NtCreateFile\n"


def test_ln_neighbours(world: World) -> None:
    out = run(world, "ln nt!NtCreateFile+0x12")
    assert out == (
        "Browse module\n"
        "Set bu breakpoint\n"
        "\n"
        "(fffff800`62c3a1e0)   nt!NtCreateFile+0x12   |  (fffff800`62c3a280)   nt!IopCreateFile\n"
    )
    r = parse("ln", out)
    assert [(s.name, s.exact) for s in r.symbols] == [("nt!NtCreateFile+0x12", False), ("nt!IopCreateFile", False)]
    assert run(world, "ln 0") == ""  # no module there


def test_ln_names_what_k_names(world: World) -> None:
    for frame in world.current_thread().frames[1:4]:
        r = parse("ln", run(world, f"ln {frame.site:x}"))
        assert r.symbols[0].name == world.name(frame.site)


def test_lm_is_the_canned_listing(world: World) -> None:
    out = run(world, "lm")
    lines = out.splitlines()
    assert lines[0] == "start             end                 module name"
    assert "fffff800`62600000 fffff800`63646000   nt         (pdb symbols)          " + NT_PDB in lines
    assert "fffff800`60da0000 fffff800`60da9000   myfault    (deferred)             " in lines
    assert "ffffeccb`d0a00000 ffffeccb`d0d9e000   win32kfull   (deferred)             " in lines
    assert lines[lines.index("Unloaded modules:") + 1] == "fffff800`64270000 fffff800`6427f000   dump_storport.sys"
    r = parse("lm", out)
    assert r.kind == "modules" and len(r.modules) == len(world.modules)
    starts = [int(m.start, 16) for m in r.modules]
    assert starts == sorted(starts)
    assert run(world, "lm k") == out
    assert "Unloaded modules:" not in run(world, "lm o")


def test_lm_m_and_lmvm(world: World) -> None:
    assert run(world, "lm m nt") == (
        "Browse full module list\n"
        "start             end                 module name\n"
        "fffff800`62600000 fffff800`63646000   nt         (pdb symbols)          " + NT_PDB + "\n"
    )
    v = run(world, "lmvm nt")
    assert run(world, "lmv m nt") == v
    assert v.splitlines()[3:] == [
        "    Loaded symbol image file: ntkrnlmp.exe",
        "    Image path: ntkrnlmp.exe",
        "    Image name: ntkrnlmp.exe",
        "    Browse all global symbols  functions  data",
        "    Image was built with /Brepro flag.",
        "    Timestamp:        4C13BB79 (This is a reproducible build file hash, not a timestamp)",
        "    CheckSum:         00A6C6C8",
        "    ImageSize:        01046000",
        "    Translations:     0000.04b0 0000.04e4 0409.04b0 0409.04e4",
        "    Information from resource tables:",
    ]
    m = run(world, "lmvm myfault")
    assert "    Timestamp:        Fri Jul 10 01:26:53 2020 (5F07C3DD)\n" in m
    assert "Brepro" not in m
    rec = parse("lmvm myfault", m).modules[0]
    assert (rec.name, rec.image_path) == ("myfault", "\\??\\C:\\Windows\\system32\\drivers\\myfault.sys")
    assert len(parse("lmv", run(world, "lmv")).modules) == len(world.modules)
    assert run(world, "lm 1m").splitlines()[0] == "win32kfull"
    assert run(world, "lmf m nt").splitlines()[2].endswith("   nt       ntkrnlmp.exe")


def test_evaluate(world: World) -> None:
    # corpus misc/10: the signed decimal, then the 64-bit hex
    out = run(world, "? nt!NtCreateFile")
    assert out == "Evaluate expression: -8794436034080 = fffff800`62c3a1e0\n"
    r = parse("? nt!NtCreateFile", out)
    assert (r.value, r.decimal) == ("0xfffff80062c3a1e0", -8794436034080)
    assert run(world, "? 1+1") == "Evaluate expression: 2 = 00000000`00000002\n"
    assert run(world, "? @rsp") == f"Evaluate expression: {world.registers()['rsp'] - (1 << 64)} = fffff800`66c0ef38\n"


def test_formats(world: World) -> None:
    # published x64 kd: ".formats 0x22" (Thu Jan  1 ... 1970 in the author's zone; UTC here)
    assert run(world, ".formats 0x22") == (
        "Evaluate expression:\n"
        "  Hex:     00000000`00000022\n"
        "  Decimal: 34\n"
        "  Decimal (unsigned) : 34\n"
        "  Octal:   0000000000000000000042\n"
        "  Binary:  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00100010\n"
        '  Chars:   ......."\n'
        "  Time:    Thu Jan  1 00:00:34 1970\n"
        "  Float:   low 4.76441e-044 high 0\n"
        "  Double:  1.67982e-322\n"
    )
    out = run(world, ".formats FFFFF8020F3F4280")
    assert "  Decimal: -8787247283584\n" in out and "  Time:    ***** Invalid FILETIME\n" in out
    assert "  Chars:   .....?B.\n" in out and "  Float:   low 9.42983e-030 high -1.#QNAN\n" in out
    assert "  Double:  -1.#QNAN\n" in out
    big = run(world, ".formats 0x74536d4d`03880000")
    assert "  Time:    Sat Jan  8 03:15:00.577 28163 (UTC + 0:00)\n" in big
    r = parse(".formats 0x22", run(world, ".formats 0x22"))
    assert r.kind == "expression" and r.value == "0x0000000000000022" and r.decimal == 34


def test_sympath_is_kept_per_world() -> None:
    w = build()
    out = run(w, ".sympath")
    assert out.splitlines()[:2] == [
        "Symbol search path is: srv*",
        "Expanded Symbol search path is: SRV*C:\\ProgramData\\Dbg\\sym*https://msdl.microsoft.com/download/symbols",
    ]
    run(w, ".sympath+ C:\\mysyms")
    r = parse(".sympath", run(w, ".sympath"))
    assert r.kind == "symbol_path" and r.path == "srv*;C:\\mysyms"
    assert [v["location"] for v in r.validation] == ["srv*", "C:\\mysyms"]
    run(w, ".sympath srv*D:\\sym")
    assert run(w, ".sympath").splitlines()[1] == (
        "Expanded Symbol search path is: SRV*D:\\sym*https://msdl.microsoft.com/download/symbols"
    )


def test_reload(world: World) -> None:
    out = run(world, ".reload")
    assert out.startswith("Connected to Windows 10 19041 x64 target at (Mon Mar  4 10:15:42.118 2024 (UTC + 0:00))")
    assert out.endswith("......Unable to enumerate user-mode unloaded modules, Win32 error 0n30\n")
    assert parse(".reload", out).kind == "symbol_load"
    assert run(world, ".reload /f nt") == ""
    assert "(pdb symbols)" in run(world, "lm m nt")  # nt keeps its pdb; the rest stay deferred
    assert "(deferred)" in run(world, "lm m hal")
    assert run(world, ".reload /f bogus.sys").startswith('"bogus.sys" was not found in the image list.\n')


def test_lm_in_a_user_process_context_lists_its_dlls() -> None:
    w = build()
    assert "ntdll" not in run(w, "lm")  # the break-in's Idle process has no user half
    w.context_process = next(p for p in w.processes if p.peb).address
    user = parse("lm u", run(w, "lm u"))
    assert {m.name for m in user.modules} == {m.name for m in w.user_modules}
    both = parse("lm", run(w, "lm"))
    assert len(both.modules) == len(w.modules) + len(w.user_modules)
    assert len(parse("lm k", run(w, "lm k")).modules) == len(w.modules)


def test_lm_a_and_lm_l(world: World) -> None:
    assert run(world, "lm a @rip") == run(world, "lm m nt")  # the module that holds rip
    assert [m.name for m in parse("lm", run(world, "lma fffff800`60da1000")).modules] == ["myfault"]
    loaded = run(world, "lm l")
    assert [m.name for m in parse("lm l", loaded).modules] == ["nt"] and "Unloaded" not in loaded
