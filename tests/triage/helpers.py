"""What the triage tests share: the simulator's spec, the fixture dumps, copies varied so buckets differ."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from kdmcp.engine import simulator_command
from kdmcp.triage.models import DumpRecord, ExceptionStop, TriageSpec

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"
KERNEL = DUMPS / "kernel-header-only.dmp"
USER = sorted(p for p in DUMPS.glob("*.dmp") if p != KERNEL)


def sim_spec(timeout_s: float = 30.0, **more: object) -> TriageSpec:
    return TriageSpec.model_validate({"debuggers": {"kd": simulator_command("kd"), "cdb": simulator_command("cdb")},
                                      "timeout_s": timeout_s, **more})


def distinct_copies(folder: Path, count: int, sources: list[Path] | None = None) -> list[Path]:
    """``count`` dumps under ``folder``, copies of the fixtures each made distinct (one byte appended:
    a minidump's streams are found through its directory, so trailing bytes change the hash only)."""
    folder.mkdir(parents=True, exist_ok=True)
    sources = sources or [KERNEL, *USER]
    made = []
    for n in range(count):
        source = sources[n % len(sources)]
        target = folder / f"{n:03d}-{source.name}"
        shutil.copyfile(source, target)
        with open(target, "ab") as f:
            f.write(n.to_bytes(4, "little"))
        made.append(target)
    return made


def fake_debugger(folder: Path, behaviour: str) -> list[str]:
    """An argv prefix for a debugger that misbehaves: ``hang`` prints cdb's prompt and never answers
    a command; ``die`` prints an error and exits 1 before any prompt."""
    script = folder / f"fake_{behaviour}.py"
    if behaviour == "hang":
        body = "import sys, time\nsys.stdout.write('0:000> ')\nsys.stdout.flush()\ntime.sleep(600)\n"
    else:
        body = "import sys\nsys.stdout.write('Could not open dump file, HRESULT 0x80004005\\n')\nsys.exit(1)\n"
    script.write_text(body)
    return [sys.executable, str(script)]


def record(name: str, sha: str, key: str = "B", **more: object) -> DumpRecord:
    """A made-up record for the fast tier (store, buckets, rendering)."""
    return DumpRecord.model_validate({"name": name, "path": f"/d/{name}", "sha256": sha, "size": 10, "status": "ok",
                                      "bucket_key": key, "stack_hash": "0" * 16, "seconds": 0.1, **more})


def small_run() -> list[DumpRecord]:
    """Seven records: bucket A of 5 (two stacks), B of 1 (an access violation past the dispatcher), one truncated."""
    records = [record(f"a{n}.dmp", f"{n:064x}", "A", stack_hash=f"{n % 2:016x}") for n in range(5)]
    violation = ExceptionStop(code="0xc0000005", description="Access violation")
    records += [record("b.dmp", "b" * 64, "B", exception=violation,
                       frames=["ntdll!KiUserExceptionDispatcher", "app!Parse+0x12"])]
    return [*records, record("c.dmp", "c" * 64, "failed:truncated", status="failed", category="truncated")]
