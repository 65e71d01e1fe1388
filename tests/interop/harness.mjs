// kd-mcp as a client built on the official MCP TypeScript SDK sees it, over stdio and HTTP.
//
//   node tests/interop/harness.mjs --python PYTHON --root REPO --groups JSON [--transport stdio|http|all] [--cwd DIR]
//
// --cwd: where the servers run (default: --root). An installed wheel is driven from a folder outside
// the checkout, so `python -m kdmcp` cannot find the source tree's package (tests/interop/test_packaging.py).
// --groups: kd-mcp's tool groups (kdmcp/server/surface.py TOOL_GROUPS, as JSON), the one list of tools.
//
// Lists the tools (the SDK would compile a validator per outputSchema, as every TS client does;
// kd-mcp publishes none, docs/results.md), calls every tool on success and on each error category the simulator can provoke, and checks
// what the agent would see: no -32602 "Structured content does not match", the category in the
// first text block (`error[category]: message`), protocol errors where the MCP spec asks for them.
// Prints one line per check and a JSON summary last; exits 1 on any failure, 2 on a hang.
// Every process it starts, it stops; it listens on and connects to loopback only.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const { values: opts } = parseArgs({
  options: {
    python: { type: "string", default: "python3" },
    root: { type: "string", default: process.cwd() },
    cwd: { type: "string" },
    transport: { type: "string", default: "all" },
    groups: { type: "string" },
  },
});

const REQUEST = { timeout: 60_000 }; // every request is bounded
const WATCHDOG_MS = 300_000; // and so is the whole run
const KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0";
const SCENARIOS = join(opts.root, "fixtures", "scenarios");
const ERROR_TEXT = /^error\[([a-z_]+)\]: /;

const work = mkdtempSync(join(tmpdir(), "kdmcp-interop-"));
// triage_dumps writes its records under the config's records_dir: this run's folder, not the user's state dir
const TRIAGE_CONFIG = `triage:\n  records_dir: ${JSON.stringify(join(work, "triage"))}\n`;
const children = new Set();
const results = {
  passed: 0, failed: 0, failures: [], categories: {}, tools_ok: {}, tools_list_bytes: {},
  // What the results carried, as a host application would hand them on (scripts/compatibility_page.py).
  success_carries: [], error_carries: [],
};

/** "1 text + structuredContent": a result's content blocks by type, and whether structuredContent came. */
function carried(result) {
  const types = {};
  for (const block of result?.content ?? []) types[block.type] = (types[block.type] ?? 0) + 1;
  const parts = Object.keys(types).sort().map((type) => `${types[type]} ${type}`);
  if (result?.structuredContent !== undefined) parts.push("structuredContent");
  return parts.join(" + ");
}

function noteCarried(list, result) {
  const shape = carried(result);
  if (shape && !list.includes(shape)) list.push(shape);
}

function check(label, ok, detail = "") {
  if (ok) {
    results.passed += 1;
    console.log(`ok   ${label}`);
  } else {
    results.failed += 1;
    results.failures.push(`${label}: ${detail}`);
    console.log(`FAIL ${label}: ${detail}`);
  }
  return ok;
}

function childEnv(extra = {}) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("KDMCP_")) env[name] = value;
  }
  return { ...env, PYTHONUNBUFFERED: "1", ...extra };
}

async function call(client, name, args = {}) {
  try {
    return { result: await client.callTool({ name, arguments: args }, undefined, REQUEST) };
  } catch (error) {
    return { error };
  }
}

function describe(outcome) {
  if (outcome.error) return `threw ${outcome.error.code ?? ""} ${outcome.error.message}`;
  return JSON.stringify(outcome.result).slice(0, 400);
}

/** A success: no throw, not isError, structuredContent, and one text block for the model that is
 * not the JSON again (a header line in brackets, then the debugger's output). */
async function expectOk(t, name, args = {}) {
  const outcome = await call(client_(t), name, args);
  const text = outcome.result?.content?.[0];
  const ok = !outcome.error && !outcome.result.isError && outcome.result.structuredContent !== undefined
    && outcome.result.content.length === 1 && text?.type === "text" && text.text.startsWith("[");
  if (check(`${t.label}: ${name} ok`, ok, describe(outcome))) {
    noteCarried(results.success_carries, outcome.result);
    results.tools_ok[name] = true;
    return outcome.result.structuredContent;
  }
  return {};
}

/** An error the agent can read: no throw, isError, no structuredContent, `error[category]:` first. */
async function expectError(t, name, args, wanted) {
  const outcome = await call(client_(t), name, args);
  const categories = Array.isArray(wanted) ? wanted : [wanted];
  let got = null;
  let details = {};
  if (!outcome.error && outcome.result.isError && outcome.result.structuredContent === undefined) {
    const [first, second] = outcome.result.content ?? [];
    got = ERROR_TEXT.exec(first?.type === "text" ? first.text : "")?.[1] ?? null;
    if (second?.type === "text") details = JSON.parse(second.text);
    if (first?.type === "text") details = { ...details, message: first.text.replace(ERROR_TEXT, "") };
  }
  const ok = got !== null && categories.includes(got);
  if (check(`${t.label}: ${name} -> ${categories.join("|")}`, ok, describe(outcome))) {
    noteCarried(results.error_carries, outcome.result);
    results.categories[got] = (results.categories[got] ?? 0) + 1;
  }
  return details;
}

/** A JSON-RPC error with this code (and words in its message), not a tool result. */
async function expectRpcError(label, promise, code, words) {
  try {
    const value = await promise;
    check(label, false, `answered ${JSON.stringify(value).slice(0, 300)}`);
  } catch (error) {
    check(label, error instanceof McpError && error.code === code && error.message.includes(words),
      `threw ${error.code} ${error.message}`);
  }
}

const client_ = (t) => t.client;

/** A client whose user answers each form elicitation with the next of `answers` (and is counted). */
async function connectAsking(label, transport, answers) {
  const client = new Client({ name: "kd-mcp-interop", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  const person = { asked: [], answers };
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    person.asked.push(request.params.message);
    return person.answers.shift() ?? { action: "cancel" };
  });
  await client.connect(transport, REQUEST);
  return { label, client, person };
}

// Asking the human (docs/security.md): a network path standard refuses for its class only.
const ASKED_LINE = ".sympath \\\\evil\\share";
const ASKED_PATH = "\\\\evil\\share";
const ASKED_RAN = `Symbol search path is: ${ASKED_PATH}`;
const ACCEPT = { action: "accept", content: { allow_once: true } };

/** A standard client that declared form elicitation: asked, it runs once per yes; no is policy_denied. */
async function asking(t) {
  await expectOk(t, "start_from_state", { initial_break: true, timeout_s: 20 });
  t.person.answers.push(ACCEPT, ACCEPT, { action: "decline" }, { action: "cancel" });
  for (const round of [1, 2]) { // accepted: it runs, once; the same line asks again
    const ran = await expectOk(t, "kd_command", { command: ASKED_LINE });
    // kd's answer: its raw output, or (--structured) the symbol_path record that parsed it
    const said = String(ran.output).includes(ASKED_RAN) || ran.record?.path === ASKED_PATH;
    check(`${t.label}: accepted ${round}: the line ran once, asked ${round}`, said
      && t.person.asked.length === round && t.person.asked[round - 1].includes(ASKED_LINE), JSON.stringify(ran));
  }
  for (const [answer, said] of [["decline", "declined"], ["cancel", "did not allow it"]]) {
    const details = await expectError(t, "kd_command", { command: ASKED_LINE }, "policy_denied");
    check(`${t.label}: ${answer} is refused`, String(details.message ?? "").includes(said), JSON.stringify(details));
  }
  const before = t.person.asked.length;
  await expectOk(t, "kd_command", { command: "r" });
  await expectError(t, "kd_command", { command: ".shell dir" }, "policy_denied");
  check(`${t.label}: what standard allows, and what a person may not allow, is never asked`,
    t.person.asked.length === before && before === 4, String(t.person.asked.length));
  await expectOk(t, "stop_kd");
}

/** On a broken-in session of a client that may not be asked: read_only (never asked), or a
 * standard client without the capability (told how to allow the line). */
async function notAsked(t) {
  const details = await expectError(t, "kd_command", { command: ASKED_LINE }, "policy_denied");
  const message = String(details.message ?? "");
  if (t.person) {
    check(`${t.label}: read_only is never asked`, t.person.asked.length === 0 && message.includes("read_only"),
      message);
  } else {
    check(`${t.label}: a client without elicitation is told how to allow it`,
      message.includes("cannot ask its user") && message.includes("policy: full"), message);
  }
}

async function connect(label, transport) {
  const client = new Client({ name: "kd-mcp-interop", version: "1.0.0" });
  await client.connect(transport, REQUEST);
  return { label, client };
}

async function listTools(t, wanted) {
  const listed = await t.client.listTools(undefined, REQUEST);
  const names = listed.tools.map((tool) => tool.name).sort();
  check(`${t.label}: tools/list`, JSON.stringify(names) === JSON.stringify([...wanted].sort()), names.join(","));
  check(`${t.label}: no tool publishes an outputSchema`, listed.tools.every((tool) => !tool.outputSchema), "");
  return { names, bytes: Buffer.byteLength(JSON.stringify(listed)) };
}

// The tool groups (kdmcp/server/surface.py, passed by the Python test): the session group every client gets.
const GROUPS = JSON.parse(opts.groups ?? "{}");
const SESSION_GROUP = GROUPS.session ?? [];
const ALL_TOOLS = Object.values(GROUPS).flat();
// Tools that need a session, and the arguments that get them past validation to unknown_session.
const SESSION_TOOLS = {
  break_in: {}, continue_go: {}, resume_for_winrm: {}, kd_command: { command: "r" }, registers: {}, backtrace: {},
  modules: {}, processes: {}, analyze: {}, vertarget: {}, read_output: {}, stop_kd: {},
  set_breakpoint: { location: "nt!NtCreateFile" }, breakpoints: {}, clear_breakpoints: { all: true }, step: {},
  run_to: { location: "nt!NtCreateFile" }, wait_for_stop: { timeout_s: 0.1 }, location: {},
  threads: {}, read_memory: { address: "@rsp" }, disassemble: { address: "@rip" }, evaluate: { expression: "1" },
  lookup_symbol: { name: "nt!X" }, read_type: { type: "nt!_KTHREAD" }, set_symbol_path: { path: "C:\\s" },
  exception: {}, driver_object: { name: "myfault" }, device_object: { name: "\\Device\\Myfault" },
  irp: { address: "ffffe70f2ed94d70" },
  walk_list: { head: "nt!PsActiveProcessHead", type: "nt!_EPROCESS", link_field: "ActiveProcessLinks" },
  handles: {}, pool: { address: "0" }, pool_find: { tag: "Proc" }, pool_usage: {}, pte: { address: "0" },
  ioctl_map: { driver: "myfault" },
};

/** The protocol: capabilities with content only, unknown methods and tools as JSON-RPC errors. */
async function protocol(t) {
  const caps = t.client.getServerCapabilities() ?? {};
  check(`${t.label}: capabilities: tools and prompts, no resources`, caps.tools && caps.prompts && !caps.resources,
    JSON.stringify(caps));
  await expectRpcError(`${t.label}: prompts/get unknown -> -32602`, t.client.getPrompt({ name: "nope" }, REQUEST),
    ErrorCode.InvalidParams, "Unknown prompt");
  await expectRpcError(`${t.label}: resources/list -> -32601`, t.client.listResources(undefined, REQUEST),
    ErrorCode.MethodNotFound, "");
  await expectRpcError(`${t.label}: unknown tool -> -32602`,
    t.client.callTool({ name: "no_such_tool", arguments: {} }, undefined, REQUEST), ErrorCode.InvalidParams,
    "Unknown tool");
}

const PROMPT_SAMPLE = { path: "C:\\dumps\\MEMORY.DMP", state_file: "C:\\mcp-state\\kd-session.json" };

/** The prompts a client is listed: each one it can follow (every tool its text calls is in its
 * tools/list), got with its required arguments; a bad argument and an unlisted prompt -> -32602. */
async function prompts(t, tools, wanted) {
  const listed = (await t.client.listPrompts(undefined, REQUEST)).prompts;
  const names = listed.map((prompt) => prompt.name);
  // wanted: the prompts it must be listed (the triage recipes also once their tools are served); none: none.
  check(`${t.label}: prompts/list`, wanted.length === 0 ? names.length === 0 : wanted.every((n) => names.includes(n)),
    names.join(","));
  for (const prompt of listed) {
    const args = Object.fromEntries((prompt.arguments ?? []).filter((a) => a.required)
      .map((a) => [a.name, PROMPT_SAMPLE[a.name] ?? "1"]));
    const got = await t.client.getPrompt({ name: prompt.name, arguments: args }, REQUEST);
    const text = got.messages.length === 1 && got.messages[0].role === "user" ? got.messages[0].content.text : "";
    const calls = [...String(text).matchAll(/\b([a-z]+(?:_[a-z]+)*)\(/g)].map((m) => m[1]);
    check(`${t.label}: prompt ${prompt.name} calls only listed tools`,
      calls.length > 0 && calls.every((name) => tools.includes(name)), calls.filter((n) => !tools.includes(n)).join(","));
  }
  if (names.includes("kdnet_winrm_loop")) {
    await expectRpcError(`${t.label}: prompt with a bad argument -> -32602`,
      t.client.getPrompt({ name: "kdnet_winrm_loop", arguments: { state_file: "" } }, REQUEST),
      ErrorCode.InvalidParams, "state_file");
  } else {
    await expectRpcError(`${t.label}: an unlisted prompt -> -32602`,
      t.client.getPrompt({ name: "kdnet_winrm_loop", arguments: {} }, REQUEST), ErrorCode.InvalidParams,
      "not available to this client");
  }
}

/** Every tool with no session (unknown_session) and with bad arguments (invalid_argument, state_file). */
async function withoutSession(t) {
  for (const [name, args] of Object.entries(SESSION_TOOLS)) {
    await expectError(t, name, args, "unknown_session");
  }
  await expectError(t, "start_kd", { port: 0, key: KEY }, "invalid_argument");
  await expectError(t, "start_kd", {}, "invalid_argument");
  await expectError(t, "start_kd", { connection: "nope" }, "invalid_argument");
  await expectError(t, "kd_command", { command: 42 }, "invalid_argument");
  await expectError(t, "backtrace", { variant: "k; g" }, "invalid_argument");
  await expectError(t, "read_output", { output_id: "garbage" }, "invalid_argument");
  await expectError(t, "start_from_state", { state_file: join(work, "missing.json") }, "state_file");
  await expectOk(t, "health_check");
  await expectOk(t, "list_sessions");
}

/** One session through the whole loop: every tool succeeds, and the errors a live session gives. */
async function loop(t) {
  const started = await expectOk(t, "start_from_state", { timeout_s: 20 });
  const details = await expectError(t, "kd_command", { command: "r" }, "target_running");
  check(`${t.label}: target_running names the session`, details.session_id === started.session_id,
    JSON.stringify(details));
  await expectOk(t, "break_in");
  const out = await expectOk(t, "kd_command", { command: "k" });
  for (const name of ["registers", "backtrace", "modules", "processes", "analyze", "vertarget"]) {
    await expectOk(t, name);
  }
  await expectOk(t, "read_output", { output_id: out.output_id });
  await expectError(t, "kd_command", { command: ".shell dir" }, "policy_denied");
  if (t.label === "stdio" || t.label === "http") await notAsked(t);
  await expectError(t, "kd_command", { command: "r\nk" }, "invalid_argument");
  await expectError(t, "read_output", { offset: 10 ** 9 }, "invalid_argument");
  await expectOk(t, "continue_go");
  await expectError(t, "registers", {}, "target_running");
  await expectOk(t, "break_in");
  await expectOk(t, "resume_for_winrm", { wait_s: 0.3 });
  await expectOk(t, "break_in");
  await expectOk(t, "stop_kd");
  await expectError(t, "stop_kd", { session_id: started.session_id }, "unknown_session");
}

/** The run-control tools (issue 15) on the simulated kernel: a breakpoint, the stop, steps. */
async function runControl(t) {
  await expectOk(t, "start_from_state", { initial_break: true, timeout_s: 20 });
  const bp = await expectOk(t, "set_breakpoint", { location: "nt!NtCreateFile" });
  check(`${t.label}: set_breakpoint says its id`, bp.breakpoint?.id === 0, JSON.stringify(bp));
  await expectOk(t, "breakpoints");
  await expectOk(t, "continue_go");
  const stop = await expectOk(t, "wait_for_stop", { timeout_s: 20 });
  check(`${t.label}: wait_for_stop reports the breakpoint`, stop.stop?.breakpoint === 0
    && stop.location?.symbol === "nt!NtCreateFile", JSON.stringify(stop));
  const stepped = await expectOk(t, "step", { mode: "over" });
  check(`${t.label}: step moves`, stepped.location?.symbol === "nt!NtCreateFile+0x5", JSON.stringify(stepped));
  await expectOk(t, "location");
  await expectOk(t, "run_to", { location: "nt!NtReadFile", timeout_s: 20 });
  await expectError(t, "set_breakpoint", { location: "a b" }, "invalid_argument");
  const batch = await expectOk(t, "debug_batch", { steps: [
    { tool: "set_breakpoint", arguments: { location: "nt!NtWriteFile" } },
    { command: "bl", expect: { contains: "no such text" } },
  ] });
  check(`${t.label}: a failed debug_batch rolls its breakpoint back`, batch.outcome === "failed"
    && JSON.stringify(batch.rolled_back ?? []).includes("bc"), JSON.stringify(batch));
  await expectOk(t, "clear_breakpoints", { all: true });
  await inspection(t);
  await expectOk(t, "stop_kd");
  await expectOk(t, "decode_error", { code: "0xC0000005" }); // no session: the shipped table
  const decoded = await expectOk(t, "decode_ioctl", { code: "0x222003" }); // pure: no session
  check(`${t.label}: decode_ioctl spells the CTL_CODE`,
    decoded.ctl_code === "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)", JSON.stringify(decoded));
  const named = await expectOk(t, "decode_ioctl", { code: 2954240 });
  check(`${t.label}: decode_ioctl names a well-known code`, named.name === "IOCTL_STORAGE_QUERY_PROPERTY",
    JSON.stringify(named));
  await expectError(t, "decode_ioctl", { code: "zz" }, "invalid_argument");
  await expectOk(t, "attach_process", { pid: 1234, timeout_s: 20 });
  await expectOk(t, "exception");
  await expectOk(t, "stop_kd");
}

/** The inspection tools (issue 15) on a broken-in kernel. */
async function inspection(t) {
  await expectOk(t, "threads");
  const mem = await expectOk(t, "read_memory", { address: "@rsp", length: 64 });
  check(`${t.label}: read_memory has rows`, Array.isArray(mem.rows) && mem.rows.length > 0, JSON.stringify(mem));
  await expectOk(t, "disassemble", { address: "@rip", count: 4 });
  await expectOk(t, "evaluate", { expression: "1+2" });
  await expectOk(t, "lookup_symbol", { name: "nt!NtCreate*" });
  await expectOk(t, "read_type", { type: "nt!_KTHREAD", address: "@$thread" });
  await expectOk(t, "set_symbol_path", { path: "C:\\symbols", append: true });
  await expectOk(t, "decode_error", { code: "5" });
  await expectError(t, "exception", {}, "invalid_argument"); // kernel: analyze / .bugcheck instead
  await driverTools(t);
}

/** The driver tools (issue 16) on the simulated kernel: myfault, its device, its pending IRP. */
async function driverTools(t) {
  const driver = await expectOk(t, "driver_object", { name: "myfault" });
  check(`${t.label}: driver_object lists the majors myfault handles`,
    (driver.dispatch ?? []).map((d) => d.major).join(",") === "IRP_MJ_CREATE,IRP_MJ_CLOSE,IRP_MJ_DEVICE_CONTROL"
      && driver.unhandled_majors === 25, JSON.stringify(driver));
  const device = await expectOk(t, "device_object", { address: driver.devices?.[0]?.address ?? "0" });
  const irp = await expectOk(t, "irp", { address: device.current_irp ?? "0" });
  check(`${t.label}: irp decodes the pending IOCTL`, irp.locations?.[0]?.ioctl?.code === "0x8336a01e",
    JSON.stringify(irp));
  await expectError(t, "irp", { address: "0" }, "invalid_argument");
  const walk = await expectOk(t, "walk_list", { head: "nt!PsActiveProcessHead", type: "nt!_EPROCESS",
    link_field: "ActiveProcessLinks", fields: ["ImageFileName"] });
  check(`${t.label}: walk_list walks the 40 processes back to the head`, walk.stopped === "complete"
    && walk.entries?.length === 40 && walk.entries[0].fields?.ImageFileName === "System", JSON.stringify(walk));
  await expectError(t, "walk_list", { head: "nt!PsActiveProcessHead", type: "nt!_EPROCESS",
    link_field: "ActiveProcessLinks", limit: 1025 }, "invalid_argument");
  const handles = await expectOk(t, "handles", { process: "4", limit: 5 });
  check(`${t.label}: handles caps its rows and says how many there were`, handles.handles?.length === 5
    && handles.total === 2651, JSON.stringify(handles).slice(0, 400));
  const block = await expectOk(t, "pool", { address: "ffffe70f2ed94d70" });
  check(`${t.label}: pool finds the IRP's block`, block.block?.tag === "Irp" && block.block?.state === "Allocated"
    && block.block?.address === "0xffffe70f2ed94d60", JSON.stringify(block).slice(0, 400));
  const found = await expectOk(t, "pool_find", { tag: "Proc", limit: 3 });
  check(`${t.label}: pool_find caps its blocks and counts them all`, found.found === 40 && found.blocks?.length === 3,
    JSON.stringify(found).slice(0, 400));
  await expectError(t, "pool_find", { tag: "Irp " }, "invalid_argument");
  await expectOk(t, "pool_usage", { tag: "Irp" });
  const pte = await expectOk(t, "pte", { address: "ffffe70f2ed94d70" });
  check(`${t.label}: pte works out the physical address`, pte.physical_address === "0xe03fad70", JSON.stringify(pte));
  const map = await expectOk(t, "ioctl_map", { driver: "myfault" });
  const codes = (map.codes ?? []).map((c) => c.code);
  check(`${t.label}: ioctl_map recovers myfault's seven codes`, codes.length === 7 && codes[0] === "0x8336e00b"
    && map.codes[3]?.how === "jump_table", JSON.stringify(map).slice(0, 600));
  const none = await expectOk(t, "ioctl_map", { driver: "pci" });
  check(`${t.label}: ioctl_map says pci handles no IOCTLs`, none.handles_ioctls === false, JSON.stringify(none));
  await expectError(t, "ioctl_map", { driver: "nosuchdriver" }, "invalid_argument");
}

/** Four sessions (the default limit) and a fifth: capacity. */
async function capacity(t) {
  for (let port = 50001; port <= 50004; port += 1) {
    await expectOk(t, "start_kd", { port, key: KEY, timeout_s: 20 });
  }
  await expectError(t, "start_kd", { port: 50005, key: KEY, timeout_s: 20 }, "capacity");
  await expectError(t, "kd_command", { command: "r" }, "unknown_session"); // four live: which one?
  const listed = await expectOk(t, "list_sessions");
  for (const session of (listed.sessions ?? []).filter((s) => s.live)) {
    await expectOk(t, "stop_kd", { session_id: session.session_id });
  }
}

function stdioTransport(args) {
  return new StdioClientTransport({
    command: opts.python, args: ["-m", "kdmcp", "--structured", ...args], cwd: opts.cwd ?? opts.root, env: childEnv(),
    stderr: "pipe",
  });
}

async function withClient(label, transport, body, answers = null) {
  const t = answers === null ? await connect(label, transport) : await connectAsking(label, transport, answers);
  try {
    await body(t);
  } finally {
    await t.client.close(); // stdio: ends stdin, then SIGTERM, then SIGKILL
  }
}

// The servers of one transport are independent (each its own process, sessions and simulated
// targets), so they run at once: a run costs its slowest server, not the sum of their start-ups.
async function stdio() {
  const config = join(work, "full.yaml");
  writeFileSync(config, `policy: full\n${TRIAGE_CONFIG}`);
  const attach = join(work, "attach.yaml"); // standard, with attach_process switched on
  writeFileSync(attach, "allow_attach: true\n");
  await Promise.all([
    withClient("stdio", stdioTransport(["--simulate"]), async (t) => {
      const listed = await listTools(t, ALL_TOOLS);
      results.tools_list_bytes.stdio = listed.bytes;
      await protocol(t);
      await prompts(t, listed.names, ["kdnet_winrm_loop", "kernel_dump_triage", "user_crash_triage"]);
      await withoutSession(t);
      await loop(t);
      await capacity(t);
    }),
    withClient("stdio faults", stdioTransport(["--simulate", "--scenario", join(SCENARIOS, "faults.yaml"),
      "--config", config]), async (t) => {
      await listTools(t, ALL_TOOLS);
      const started = await expectOk(t, "start_kd", { port: 50001, key: KEY, initial_break: true, timeout_s: 20 });
      const hung = await expectError(t, "kd_command", { command: "!hardhang", timeout_s: 0.5 }, "timeout");
      check("stdio faults: timeout carries output_id and state", String(hung.output_id).startsWith(
        `${started.session_id}:`) && hung.state === "busy", JSON.stringify(hung));
      await expectError(t, "kd_command", { command: "r" }, "busy");
      await expectOk(t, "stop_kd");
      await expectOk(t, "start_kd", { port: 50002, key: KEY, initial_break: true, timeout_s: 20 });
      const crashed = await expectError(t, "kd_command", { command: "!crash" }, "debugger_exited");
      check("stdio faults: debugger_exited carries exit_code", crashed.exit_code === 3, JSON.stringify(crashed));
    }),
    withClient("stdio strict_key", stdioTransport(["--simulate", "--scenario",
      join(SCENARIOS, "strict_key.yaml")]), async (t) => {
      await listTools(t, ALL_TOOLS);
      await expectError(t, "start_kd", { port: 50005, key: KEY, timeout_s: 1.5 }, "not_connected");
    }),
    withClient("stdio kinds", stdioTransport(["--simulate", "--config", config]), kinds),
    withClient("stdio run control", stdioTransport(["--simulate", "--config", attach]), runControl),
    withClient("stdio asking", stdioTransport(["--simulate"]), asking, []),
    withClient("stdio --tools session", stdioTransport(["--simulate", "--tools", "session"]), async (t) => {
      const listed = await listTools(t, SESSION_GROUP);
      await expectError(t, "kd_command", { command: "r" }, "policy_denied");
      await prompts(t, listed.names, []);
    }),
    // No --simulate: on a machine without the Debugging Tools, starting kd is a debugger error.
    withClient("stdio no debugger", stdioTransport([]), async (t) => {
      await listTools(t, ALL_TOOLS);
      await expectError(t, "start_kd", { port: 50000, key: KEY, timeout_s: 1 }, ["debugger", "not_connected"]);
    }),
  ]);
}

/** `kd-mcp serve --simulate --listen 127.0.0.1:0 ...`; resolves with its URL once it listens. */
async function listener(args, env) {
  const proc = spawn(opts.python, ["-m", "kdmcp", "serve", "--simulate", "--structured", "--listen", "127.0.0.1:0", ...args], {
    cwd: opts.cwd ?? opts.root, env: childEnv(env), stdio: ["ignore", "ignore", "pipe"],
  });
  children.add(proc);
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  let stderr = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening on" within 30 s: ${stderr}`)), 30_000);
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(stderr);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`listener exited (${code}) before listening: ${stderr}`));
    });
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    children.delete(proc);
  };
  return { url: new URL(url), stop };
}

function httpTransport(url, token) {
  return new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
}

/** Every kind of target through a TypeScript client (the caller's policy must be full: launch, share). */
async function kinds(t) {
  await triage(t);
  const dump = await expectOk(t, "open_dump", { path: join(opts.root, "fixtures", "dumps", "null_read_av.dmp") });
  check(`${t.label}: open_dump kind and summary`, dump.kind === "user_dump" && dump.dump?.modules > 0
    && dump.dump?.exception?.code === "0xc0000005", JSON.stringify(dump.dump));
  await expectError(t, "break_in", { session_id: dump.session_id }, "invalid_argument");
  await expectOk(t, "stop_kd", { session_id: dump.session_id });
  for (const [tool, args, kind] of [["attach_process", { pid: 4242 }, "process"],
    ["launch", { command_line: ["C:\\app.exe", "-x"] }, "launched"], ["attach_local_kernel", {}, "local_kernel"]]) {
    const started = await expectOk(t, tool, args);
    check(`${t.label}: ${tool} is a ${kind} session`, started.kind === kind, JSON.stringify(started.kind));
    const stopped = await expectOk(t, "stop_kd", { session_id: started.session_id });
    check(`${t.label}: stop_kd of ${kind} says what it did`, (stopped.actions ?? []).some((a) => a.includes("(")),
      JSON.stringify(stopped.actions));
  }
  const kd = await expectOk(t, "start_kd", { port: 50000, key: KEY, initial_break: true, timeout_s: 20 });
  const shared = await expectOk(t, "share_session", { session_id: kd.session_id });
  const joined = await expectOk(t, "join_remote", { connection: shared.connection });
  check(`${t.label}: join_remote is a remote session`, joined.kind === "remote" && joined.prompt === "0: kd> ",
    JSON.stringify(joined));
  await expectOk(t, "stop_kd", { session_id: joined.session_id });
  const closed = await expectOk(t, "stop_kd", { session_id: kd.session_id });
  check(`${t.label}: stopping the sharer closes its server`,
    String(closed.actions?.at(-1)).startsWith("closed the debugging server"), JSON.stringify(closed.actions));
}

/** Fleet triage (issue 32): the fixture dumps bucketed in one call, their records paged by read_output;
 * a path that is not there is the caller's to fix. The server's config puts the records in the run's folder. */
async function triage(t) {
  const dumps = join(opts.root, "fixtures", "dumps");
  const triaged = await expectOk(t, "triage_dumps", { paths: [dumps], out: "interop" });
  check(`${t.label}: triage_dumps buckets every fixture dump`, triaged.dumps === 7 && triaged.bucketed === 7
    && triaged.buckets?.length === 7 && String(triaged.output_id).startsWith("tr"), JSON.stringify(triaged).slice(0, 400));
  const page = await expectOk(t, "read_output", { output_id: triaged.output_id });
  const names = String(page.text ?? "").split("\n").filter(Boolean).map((line) => JSON.parse(line).name).sort();
  check(`${t.label}: read_output pages the triage records`, names.length === 7 && page.eof === true, names.join(","));
  await expectError(t, "triage_dumps", { paths: [join(dumps, "no-such-folder")] }, "invalid_argument");
}

async function http() {
  await Promise.all([httpWide(), httpNarrow(), httpFull(), httpAsking()]);
}

/** Over the listener, each client is asked by its own policy: standard is asked, read_only never. */
async function httpAsking() {
  const standard = `ask-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const readOnly = `ro-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const clients = join(work, "clients-asking.yaml");
  writeFileSync(clients, `alice: {token: "${standard}", policy: standard}\nbob: {token: "${readOnly}", policy: read_only}\n`,
    { mode: 0o600 });
  const four = await listener(["--token-file", clients], {});
  try {
    await withClient("http asking", httpTransport(four.url, standard), asking, []);
    await withClient("http asking read_only", httpTransport(four.url, readOnly), async (t) => {
      await expectOk(t, "start_from_state", { initial_break: true, timeout_s: 20 });
      await notAsked(t);
      await expectOk(t, "stop_kd");
    }, []);
  } finally {
    await four.stop();
  }
}

async function httpFull() {
  const token = `full-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const clients = join(work, "clients-full.yaml");
  writeFileSync(clients, `wide: {token: "${token}", policy: full}\n`, { mode: 0o600 });
  const config = join(work, "triage.yaml");
  writeFileSync(config, TRIAGE_CONFIG);
  const three = await listener(["--token-file", clients, "--config", config], {});
  try {
    await withClient("http full", httpTransport(three.url, token), async (t) => {
      await kinds(t);
      await runControl(t);
    });
  } finally {
    await three.stop();
  }
}

async function httpWide() {
  const token = `interop-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const one = await listener([], { KDMCP_LISTEN_TOKEN: token });
  try {
    await withClient("http", httpTransport(one.url, token), async (t) => {
      const listed = await listTools(t, ALL_TOOLS);
      results.tools_list_bytes.http = listed.bytes;
      await protocol(t);
      await prompts(t, listed.names, ["kdnet_winrm_loop", "kernel_dump_triage", "user_crash_triage"]);
      await withoutSession(t);
      await loop(t);
      await capacity(t);
    });
    try {
      const t = await connect("http wrong token", httpTransport(one.url, `${token}-wrong`));
      await t.client.close();
      check("http: a wrong token is refused", false, "connected");
    } catch (error) {
      check("http: a wrong token is refused", /401|nauthori/.test(String(error?.message ?? error)), String(error));
    }
  } finally {
    await one.stop();
  }
}

async function httpNarrow() {
  const narrow = `narrow-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const clients = join(work, "clients.yaml");
  writeFileSync(clients, `narrow: {token: "${narrow}", tools: [commands], policy: read_only}\n`, { mode: 0o600 });
  const two = await listener(["--token-file", clients], {});
  try {
    await withClient("http narrow", httpTransport(two.url, narrow), async (t) => {
      const listed = await listTools(t, [...SESSION_GROUP, ...GROUPS.commands]);
      await prompts(t, listed.names, []); // each recipe needs more than session and commands
      await expectError(t, "break_in", {}, "policy_denied"); // outside its surface
      await expectOk(t, "start_from_state", { initial_break: true, timeout_s: 20 });
      await expectError(t, "kd_command", { command: "eb rip 90" }, "policy_denied"); // outside read_only
      await expectOk(t, "kd_command", { command: "r" });
      await expectOk(t, "stop_kd");
    });
  } finally {
    await two.stop();
  }
}

function cleanup() {
  for (const proc of children) proc.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
}

const watchdog = setTimeout(() => {
  console.log(`FAIL watchdog: the run took over ${WATCHDOG_MS / 1000} s`);
  cleanup();
  process.exit(2);
}, WATCHDOG_MS);

try {
  if (opts.transport === "stdio" || opts.transport === "all") await stdio();
  if (opts.transport === "http" || opts.transport === "all") await http();
  const missing = ALL_TOOLS.filter((name) => !results.tools_ok[name]);
  check("every tool succeeded at least once", missing.length === 0, missing.join(","));
} catch (error) {
  check("harness", false, error?.stack ?? String(error));
} finally {
  clearTimeout(watchdog);
  cleanup();
}
console.log(JSON.stringify(results));
process.exit(results.failed === 0 ? 0 : 1);
