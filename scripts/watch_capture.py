"""The text capture of ``kd-mcp watch --once`` in docs/watch.md, made from a real simulated session.

Starts ``kd-mcp serve --simulate --transcript DIR/run.jsonl`` on stdio under the official SDK
client, as an MCP client would, and makes the calls an agent starts with: ``start_from_state``
with ``initial_break``, then ``kd_command`` ``k`` and ``lm``. While the server still runs, it
runs ``kd-mcp watch --once`` in another process and prints the frame it drew.

    python scripts/watch_capture.py                        # into a fresh temporary directory
    python scripts/watch_capture.py --dir /tmp/kdmcp-watch --width 100 --lines 18
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]


async def capture(directory: Path, width: int, lines: int) -> str:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    state = directory / "kd-session.json"
    state.write_text(
        json.dumps(
            {
                "schema": "winrm-kd-session-v1",
                "guest_host": "192.168.56.10",
                "host_ip": "192.168.56.1",
                "port": 50000,
                "key": "2steg4fzbj2sz.1w3hv2rr7w7lu.3b4m6gq2nqdh1.2yxhyaq3o9g4c",
                "created_by": "scripts/watch_capture.py",
            }
        )
    )
    state.chmod(0o600)
    transcript = directory / "run.jsonl"
    server = StdioServerParameters(
        command=sys.executable,
        cwd=str(ROOT),
        args=["-m", "kdmcp", "serve", "--simulate", "--transcript", str(transcript)],
    )
    with anyio.fail_after(120):
        async with Client(server, read_timeout_seconds=60) as client:
            await client.call_tool("start_from_state", {"state_file": str(state), "initial_break": True})
            await client.call_tool("kd_command", {"command": "k"})
            await client.call_tool("kd_command", {"command": "lm"})
            done = await anyio.run_process(
                [
                    sys.executable,
                    "-m",
                    "kdmcp",
                    "watch",
                    "--once",
                    "--lines",
                    str(lines),
                    "--transcript",
                    str(transcript),
                ],
                env={**os.environ, "COLUMNS": str(width)},
                check=True,
                cwd=ROOT,
            )
    return done.stdout.decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where the transcript goes (default: a new temporary directory)")
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--lines", type=int, default=18)
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="kdmcp-watch-"))
    sys.stdout.write(anyio.run(capture, directory, args.width, args.lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
