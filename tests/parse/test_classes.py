"""Issue 29's parser classes, each on a real sample (``fixtures/released/classes/``, sources in its
``index.json``); the facts were read from the samples. The 16-bit ``.trap`` line and the x86
spellings of the pool answers are reconstructed (no published sample found) and marked so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kdmcp.parse import parse

CLASSES = Path(__file__).resolve().parents[2] / "fixtures" / "released" / "classes"


def _sample(name: str) -> Any:
    """The record of a sample: its first line is the prompt and command, the rest the output."""
    text = (CLASSES / name).read_bytes().decode("utf-8")
    first, _, output = text.partition("\n")
    command = first.split("> ", 1)[1].strip()
    return parse(command, output)


def test_every_sample_is_listed_with_its_source() -> None:
    index = json.loads((CLASSES / "index.json").read_text(encoding="utf-8"))
    listed = {entry["file"] for entry in index}
    assert listed == {p.name for p in CLASSES.glob("*.txt")}
    assert all(entry["source"] and entry["class"] for entry in index)


def test_dt_glued_to_its_type_is_a_type_dump() -> None:
    r = _sample("dt_glued_type.txt")
    assert (r.kind, r.type_name, r.instance) == ("type_dump", "nt!_MDL", True)
    assert [f.name for f in r.fields][:3] == ["Next", "Size", "MdlFlags"]
    assert r.fields[6].value == "0xffffca0ce154a018" and r.fields[6].type == "Void"


def test_heap_x_lfh_row_with_a_dash_prev_size_is_kept() -> None:
    r = _sample("heap_x_lfh.txt")
    assert r.kind == "object" and len(r.heap_entries) == 1
    e = r.heap_entries[0]
    assert (e.address, e.user_pointer, e.heap, e.segment) == (
        "0x00000234c1b1a9a0",
        "0x00000234c1b1a9b0",
        "0x00000234c1450000",
        "0x00000234c1a5e870",
    )
    assert (e.size, e.previous_size, e.unused, e.state) == ("0x2c0", None, "0xf", "LFH;busy")


@pytest.mark.parametrize("flags", ["LFH;free", "LFH;busy", "busy extra", "free"])
def test_heap_x_flag_words(flags: str) -> None:
    row = (
        "00000234c1b1a9a0  00000234c1b1a9b0  00000234c1450000  00000234c1a5e870"
        f"       2c0      -            f  {flags} \n"
    )
    head = (
        "Entry             User              Heap              Segment               Size  PrevSize  Unused    Flags\n"
    )
    r = parse("!heap -x 00000234c1b1a9e0", head + row)
    assert [e.state for e in r.heap_entries] == [flags]


def test_page_heap_busy_block_holds_its_addresses() -> None:
    r = _sample("heap_p_busy.txt")
    assert r.address == "0x0000015ca2a0d000" and r.fields["state"] == "busy"
    [block] = r.heap_page_blocks
    assert (block.block, block.user_address, block.user_size) == ("0x15c9f7764e0", "0x15ca2a0c220", "0xddf")
    assert (block.virtual_address, block.virtual_size) == ("0x15ca2a0c000", "0x2000")
    assert len(r.frames) == 32 and r.frames[0].function == "RtlDebugAllocateHeap"


def test_special_pool_block() -> None:
    r = _sample("pool_special.txt")
    [b] = r.pool_blocks
    assert (b.address, b.size, b.data, b.pool_type, b.tag, b.contains_address) == (
        "0xffffb98851f06000",
        "0x4f0",
        "0xffffb98851f06b10",
        "NonPaged",
        "Scbf",
        True,
    )
    assert b.description == "Mass storage driver tags" and r.fields["region"] == "Special pool"


def test_large_session_pool_block() -> None:
    r = _sample("pool_large_session.txt")
    [b] = r.pool_blocks
    assert (b.address, b.size, b.tag, b.large, b.binary) == ("0xfffff901400d0000", "0x1090", "Gh05", True, "win32k.sys")


@pytest.mark.parametrize(
    "line",
    [
        # reconstructed x86 spellings (8-digit addresses, "Tag is", the session-pool words)
        "*fe7b1000 : large page allocation, Tag is Gh15, size is 0x3000 bytes",
        "*fe7b1000 : large session pool allocation, tag is Gh15, size is 0x3000 bytes",
    ],
)
def test_x86_large_pool_answers_give_a_block(line: str) -> None:
    r = parse("!pool fe7b1010", "Pool page fe7b1010 region is Paged session pool\n" + line + "\n")
    [b] = r.pool_blocks
    assert (b.address, b.size, b.tag, b.contains_address) == ("0xfe7b1000", "0x3000", "Gh15", True)


def test_x86_special_pool_answer_gives_a_block() -> None:  # reconstructed x86 form of the real x64 line
    r = parse(
        "!pool 9c2b8fe0",
        "Pool page 9c2b8fe0 region is Special pool\n*9c2b8000 size:  fe0 data: 9c2b8020 (Paged session) *Ttfd\n",
    )
    [b] = r.pool_blocks
    assert (b.address, b.size, b.data, b.pool_type, b.tag) == (
        "0x9c2b8000",
        "0xfe0",
        "0x9c2b8020",
        "Paged session",
        "Ttfd",
    )


def test_kp_parameters_are_their_own_field() -> None:
    r = _sample("kp_params.txt")
    assert len(r.frames) == 9
    main = r.frames[2]
    assert (main.module, main.function, main.offset) == ("testGapi", "main", "0x43a")
    assert main.params == ("int argc = 0n1", "char ** argv = 0x00000000`0207a010")
    assert r.frames[3].function == "invoke_main" and r.frames[3].params == ()
    # template arguments and "{ size=0 }" hold commas that do not split a parameter
    assert len(r.frames[0].params or ()) == 3 and r.frames[0].params[2].endswith("{ size=0 }")
    assert r.frames[-1].function == "RtlUserThreadStart" and r.frames[-1].params is None


def test_kp_efree_frame_from_the_issue() -> None:
    r = parse("kp", "00 010ffc14 00889ad9 php7ts!_efree(void * ptr = 0x030bf1e0)+0x1b\n")
    assert (r.frames[0].function, r.frames[0].params) == ("_efree", ("void * ptr = 0x030bf1e0",))


def test_operator_call_keeps_its_parentheses() -> None:
    r = parse("k", "00 010ffc14 00889ad9 app!Functor::operator()+0x1b\n")
    assert (r.frames[0].function, r.frames[0].params) == ("Functor::operator()", None)


def test_16_bit_trap_instruction_has_a_mnemonic() -> None:  # reconstructed V86 form
    out = (
        "ErrCode = 00000000\n"
        "eax=00000001 ebx=00000000 ecx=00000010 edx=00000000 esi=00000000 edi=00000000\n"
        "eip=00000123 esp=0000fffe ebp=00000000 iopl=3         vm up ei pl nz na po nc\n"
        "cs=0b4a  ss=0b4a  ds=0b4a  es=0b4a  fs=0000  gs=0000             efl=00030202\n"
        "0b4a:0123 cd21            int     21h\n"
    )
    r = parse(".trap 8013eee8", out)
    assert (r.kind, r.address, r.bytes, r.mnemonic, r.operands) == ("registers", "0x0123", "cd21", "int", "21h")


def test_gflag_is_an_object_with_its_flags() -> None:
    r = _sample("gflag.txt")
    assert (r.kind, r.object_type, r.fields) == ("object", "gflag", {"NtGlobalFlag": "0x02000000"})
    assert r.entries == [{"flag": "hpa", "description": "Place heap allocations at ends of pages"}]


def test_process_switch_names_the_process() -> None:
    r = _sample("process_p_r.txt")
    [p] = r.processes
    assert (r.kind, p.address, p.current) == ("processes", "0xffffd38430e31340", True)
    assert p.details == {"cache": "forcedecodeuser done", "symbols": "loading user symbols"}


def test_thread_switch_names_thread_and_process() -> None:
    out = (
        "Implicit thread is now 821b7b30\nImplicit process is now 821b9830\n"
        ".cache forcedecodeuser done\nLoading User Symbols\n"
    )
    r = parse(".thread /p /r 821b7b30", out)  # a kernel-debugging note, stored-index file 22766956252
    [t] = r.threads
    assert (r.kind, t.address, t.owning_process, t.current) == ("threads", "0x821b7b30", "0x821b9830", True)


def test_srcpath_is_a_path_record() -> None:
    r = _sample("srcpath.txt")
    assert (r.kind, r.path) == ("symbol_path", "C:\\Projects\\WebKit\\OpenSource")


def test_cpp_structure_value() -> None:
    r = _sample("cpp_struct.txt")
    assert r.kind == "expression"
    assert r.fields["type"] == "struct _UNICODE_STRING" and r.fields["string"] == "c:\\windows\\syswow64\\calc.exe"
    assert (r.fields["Length"], r.fields["MaximumLength"]) == ("0x38", "0x3a")


def test_cpp_sizeof() -> None:
    r = _sample("cpp_sizeof.txt")
    assert (r.kind, r.value, r.fields["type"]) == ("expression", "0x10", "unsigned int64")
