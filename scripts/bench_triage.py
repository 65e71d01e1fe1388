"""Fleet triage's figures on the simulator: dumps per second, peak memory, the tool result's bytes.

A corpus from ``kdmcp.sim.dump_corpus`` (varied copies of the vendored minidumps and the
simulated kernel dump, one in 25 a bad file) is triaged

- by the local pool with 1, 2 and N jobs (N: the cores, or ``--jobs``), through the run every
  front end shares (``kdmcp.triage.run.triage_run``);
- on a Dask ``LocalCluster`` of ``--workers`` worker processes (one thread each) on 127.0.0.1,
  through the same run with the cluster as its scheduler;
- through the ``triage_dumps`` MCP tool of ``kd-mcp --simulate`` over stdio (the Python SDK's
  client), on ``--tool-dumps`` dumps (1,000 by default): the result's bytes as the client gets
  them (the text block, all a client gets by default; the structuredContent ``--structured``
  adds, measured apart), the call's time, and every dump accounted for in its JSONL.

Each run starts from an empty JSONL (nothing skipped), after an unmeasured run of 8 other dumps
on the same pool or cluster (the workers' first imports, the page cache). Peak memory is the largest sum of RSS
over this process and all its descendants (the debuggers, the workers, the server), sampled
every 50 ms. Printed, never asserted (docs/performance.md, "Fleet triage").

    python scripts/bench_triage.py                      # 200 dumps a speed run, 1,000 through the tool
    python scripts/bench_triage.py --dumps 40 --tool-dumps 100 --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from kdmcp.engine import simulator_command  # noqa: E402
from kdmcp.sim.dump_corpus import build_corpus  # noqa: E402
from kdmcp.triage.models import TriageSpec  # noqa: E402
from kdmcp.triage.run import triage_run  # noqa: E402
from kdmcp.triage.store import ResultStore  # noqa: E402

_SAMPLE_S = 0.05


class PeakRss:
    """The largest RSS sum of this process tree while the block runs (a sampling thread)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> int:
        me = psutil.Process()
        total = 0
        for p in [me, *me.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self._tree())
            if self._stop.wait(_SAMPLE_S):
                return

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _spec() -> TriageSpec:
    return TriageSpec(debuggers={"kd": simulator_command("kd"), "cdb": simulator_command("cdb")}, timeout_s=120)


def _timed_run(corpus: Path, out: Path, run: Callable[[str], Any]) -> dict[str, Any]:
    with PeakRss() as rss:
        t0 = time.perf_counter()
        summary = run(str(out))
        seconds = time.perf_counter() - t0
    records = list(ResultStore(str(out)).records())
    return {
        "dumps": len(records),
        "failed": sum(r.status == "failed" for r in records),
        "buckets": len({r.bucket_key for r in records}),
        "seconds": round(seconds, 1),
        "dumps_per_s": round(len(records) / seconds, 2),
        "peak_rss_mb": round(rss.peak / 2**20),
        "summary_dumps": summary.dumps,
    }


@contextlib.contextmanager
def _cluster(workers: int) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                     dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        yield client


async def _tool_call(corpus: Path, out_dir: Path, jobs: int) -> dict[str, Any]:
    """One ``triage_dumps`` call through the SDK client: its bytes, its time, the JSONL it names."""
    from mcp import Client, StdioServerParameters

    config = out_dir / "bench-triage-config.yaml"
    config.write_text(f"triage:\n  records_dir: {json.dumps(str(out_dir / 'records'))}\n  jobs: {jobs}\n")
    config.chmod(0o600)
    # --structured: the text block (all a client gets by default) and the typed structuredContent
    # a program asks for, both measured from one call
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "kdmcp", "--simulate", "--structured", "--config", str(config)],
                                   cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=3600) as client:
        t0 = time.perf_counter()
        result = await client.call_tool("triage_dumps", {"paths": [str(corpus)]})
        seconds = time.perf_counter() - t0
    assert not result.is_error, result.content
    text = sum(len(b.text.encode()) for b in result.content if getattr(b, "type", "") == "text")
    structured = result.structured_content or {}
    structured_bytes = len(json.dumps(structured, separators=(",", ":")).encode()) if structured else 0
    records = list(ResultStore(str(structured["records"])).records()) if "records" in structured else []
    return {
        "seconds": round(seconds, 1),
        "dumps_per_s": round(len(records) / seconds, 2) if records else None,
        "result_text_bytes": text,  # the default result (no --structured): this alone
        "result_structured_bytes": structured_bytes,
        "summary_dumps": structured.get("dumps"),
        "buckets": len(structured.get("buckets", [])) + int(structured.get("more_buckets", 0)),
        "jsonl_records": len(records),
        "jsonl_failed": sum(r.status == "failed" for r in records),
    }


def measure(dumps: int, tool_dumps: int, jobs: list[int], workers: int, seed: int) -> dict[str, Any]:
    spec = _spec()
    figures: dict[str, Any] = {
        "setup": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "dumps": dumps, "tool_dumps": tool_dumps,
                  "seed": seed, "cluster_workers": workers},
    }
    with tempfile.TemporaryDirectory(prefix="kdmcp-bench-triage-") as tmp:
        base = Path(tmp)
        corpus, warm = base / "corpus", base / "warm-up"
        build_corpus(corpus, dumps, seed=seed)
        build_corpus(warm, 8, seed=seed + 2)  # a first small run pays the cold imports and page cache, unmeasured
        triage_run([str(warm)], spec, out=str(base / "warm-local.jsonl"), jobs=max(jobs))
        for n in jobs:
            figures[f"local_jobs_{n}"] = _timed_run(
                corpus, base / f"local-{n}.jsonl",
                lambda out, n=n: triage_run([str(corpus)], spec, out=out, jobs=n),
            )
        with _cluster(workers) as client:
            triage_run([str(warm)], spec, out=str(base / "warm-cluster.jsonl"), scheduler=client)
            figures[f"cluster_{workers}_workers"] = _timed_run(
                corpus, base / "cluster.jsonl",
                lambda out: triage_run([str(corpus)], spec, out=out, scheduler=client),
            )
        if tool_dumps:
            big = base / "corpus-tool"
            build_corpus(big, tool_dumps, seed=seed + 1)
            with PeakRss() as rss:
                tool = asyncio.run(_tool_call(big, base, max(jobs)))
            tool["peak_rss_mb"] = round(rss.peak / 2**20)
            tool["dumps"] = tool_dumps
            figures["tool"] = tool
    return figures


def _print(figures: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    setup = figures["setup"]
    table = Table(title=f"fleet triage on the simulator ({setup['cpus']} CPUs, {setup['dumps']} dumps a run)")
    for column in ("run", "dumps", "failed", "buckets", "s", "dumps/s", "peak RSS MB"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name, row in figures.items():
        if name in ("setup", "tool"):
            continue
        table.add_row(name, *(str(row[k]) for k in ("dumps", "failed", "buckets", "seconds", "dumps_per_s",
                                                      "peak_rss_mb")))
    Console().print(table)
    if "tool" in figures:
        t = figures["tool"]
        print(f"triage_dumps over MCP, {t['dumps']} dumps: result {t['result_text_bytes']} bytes "
              f"(its text block; structuredContent, with --structured, {t['result_structured_bytes']}); "
              f"{t['jsonl_records']} records in the JSONL ({t['jsonl_failed']} failed), {t['buckets']} buckets; "
              f"{t['seconds']} s ({t['dumps_per_s']} dumps/s), peak RSS {t['peak_rss_mb']} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", type=int, default=200, help="dumps in each speed run (default 200)")
    parser.add_argument("--tool-dumps", type=int, default=1000, help="dumps through the MCP tool (0: skip)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="N, the largest local pool")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    jobs = sorted({1, 2, args.jobs})
    figures = measure(args.dumps, args.tool_dumps, jobs, args.workers, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
