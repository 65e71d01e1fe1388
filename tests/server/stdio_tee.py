"""Run a command, copying its stdin/stdout/stderr through while recording every byte.

    python stdio_tee.py OUTDIR -- CMD ARGS...

The server tests launch kd-mcp behind this, so a test can grep every byte the server wrote
to stdout and stderr (the canary-key check), not just what the MCP client chose to parse.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading


def _pump(src: int, dst: int, record: str) -> None:
    with open(record, "ab") as rec:
        while data := os.read(src, 65536):
            rec.write(data)
            rec.flush()
            os.write(dst, data)


def _feed(child: subprocess.Popen[bytes]) -> None:
    assert child.stdin is not None
    try:
        while data := os.read(0, 65536):
            child.stdin.write(data)
            child.stdin.flush()
        child.stdin.close()
    except BrokenPipeError:
        pass  # the server exited first


def main() -> int:
    outdir = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin and child.stdout and child.stderr
    threads = [
        threading.Thread(target=_feed, args=(child,), daemon=True),
        threading.Thread(target=_pump, args=(child.stdout.fileno(), 1, os.path.join(outdir, "stdout.bin"))),
        threading.Thread(target=_pump, args=(child.stderr.fileno(), 2, os.path.join(outdir, "stderr.bin"))),
    ]
    for t in threads:
        t.start()
    code = child.wait()
    for t in threads[1:]:
        t.join()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
