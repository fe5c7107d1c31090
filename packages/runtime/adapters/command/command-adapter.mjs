// runx command adapter: runs one local CLI tool on a work packet and reports the result.
//
// Copy this directory into a project's `adapters/` and point a definition at it:
//
//   command:
//     argv: [node, ./command/command-adapter.mjs, --prompt, stdin, --, <tool>, <args...>]
//     stdin: prompt_text
//     append_packet_path: true
//
// The runtime renders the prompt and delivers it on this script's stdin, and appends the
// packet's path as the last argument. The tool runs in the current directory (the isolated
// worktree when the packet has one, otherwise the attempt's output directory) with the
// environment the runtime built (PATH, the allowlist, literal values, granted credentials).
// The prompt goes to the tool's stdin (`--prompt stdin`), into `prompt.md` in the output
// directory whose path replaces `{prompt_file}` in the tool's arguments (`--prompt file`), or
// nowhere (`--prompt none`). `{packet_file}` and `{out_dir}` are replaced as well.
//
// This script, not the tool, writes `adapter-output-manifest.json`: the status comes from the
// tool's exit code, the summary from the tail of its stdout (the runtime redacts it), and the
// changed files from git before and after the run (never from what the tool says), each with
// the sha256 of its bytes, in the `command-result.json` artifact. It uses no network module,
// reads no home directory and starts no shell; the tool is stopped shortly before the
// runtime's own timeout so the result can still be written.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { basename, join, relative, sep } from "node:path";

// The manifest's summary holds at most 2048 characters: a status line and the stdout tail.
const SUMMARY_BYTES = 1536;
const MAX_LISTED = 1000;
const MAX_DIGEST_BYTES = 100 * 1024 * 1024;

function fail(message) {
  process.stderr.write(`command-adapter: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const separator = argv.indexOf("--");
  if (separator < 0)
    fail("usage: command-adapter.mjs [--prompt stdin|file|none] -- <tool> [args...]");
  const options = { prompt: "stdin" };
  const own = argv.slice(0, separator);
  for (let i = 0; i < own.length; i += 2) {
    if (own[i] !== "--prompt" || !["stdin", "file", "none"].includes(own[i + 1] ?? ""))
      fail(`unknown option ${JSON.stringify(own[i])}; only --prompt stdin|file|none`);
    options.prompt = own[i + 1];
  }
  const rest = argv.slice(separator + 1);
  // The runtime appends the packet path last (append_packet_path: true).
  const packetFile = rest.pop();
  if (rest.length === 0 || packetFile === undefined || !packetFile.endsWith("packet.json"))
    fail("name the tool after `--` and set append_packet_path: true in the definition");
  return { ...options, tool: rest, packetFile };
}

const sha256 = (bytes) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** git in `cwd`, no shell; null when it fails. */
function git(cwd, args) {
  const r = spawnSync("git", args, { cwd, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  return r.status === 0 ? r.stdout : null;
}

/** True when `cwd` is the top of a git work tree (an isolated worktree, never a subdirectory). */
function isWorktreeTop(cwd) {
  const top = git(cwd, ["rev-parse", "--show-toplevel"]);
  if (top === null) return false;
  try {
    return realpathSync(top.toString("utf8").trim()) === realpathSync(cwd);
  } catch {
    return false;
  }
}

/** Paths git reports as changed against HEAD (tracked and untracked), NUL-separated. */
function dirtyPaths(cwd) {
  const out = git(cwd, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  if (out === null) return [];
  const entries = out.toString("utf8").split("\0");
  const paths = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry === "" || entry.length < 4) continue;
    paths.push(entry.slice(3));
    // A rename or copy is followed by its source path.
    if (entry[0] === "R" || entry[0] === "C") paths.push(entries[++i] ?? "");
  }
  return paths.filter((p) => p !== "");
}

/** sha256 of a regular file's bytes (no symlink followed); null when gone or not a file. */
function fileDigest(cwd, path) {
  let current = cwd;
  for (const part of path.split("/")) {
    if (part === "" || part === "." || part === "..") return null;
    current = join(current, part);
    let stat;
    try {
      stat = lstatSync(current);
    } catch {
      return null;
    }
    if (stat.isSymbolicLink()) return null;
  }
  const stat = lstatSync(current);
  if (!stat.isFile() || stat.size > MAX_DIGEST_BYTES) return null;
  return sha256(readFileSync(current));
}

function snapshotGit(cwd) {
  const head = git(cwd, ["rev-parse", "HEAD"])?.toString("utf8").trim() ?? null;
  const dirty = new Map(dirtyPaths(cwd).map((p) => [p, fileDigest(cwd, p)]));
  return { head, dirty };
}

/** Files that differ after the run: HEAD moved, newly dirty, or dirty with other bytes. */
function changedFiles(cwd, before) {
  const after = snapshotGit(cwd);
  const candidates = new Set([...before.dirty.keys(), ...after.dirty.keys()]);
  if (before.head !== null && after.head !== null && before.head !== after.head) {
    const diff = git(cwd, ["diff", "--name-only", "-z", before.head, after.head]);
    for (const p of diff?.toString("utf8").split("\0") ?? []) if (p !== "") candidates.add(p);
  }
  const files = [];
  for (const path of [...candidates].sort()) {
    const digest = fileDigest(cwd, path);
    // A file already dirty before the run counts only when its bytes changed.
    if (before.dirty.has(path) && before.head === after.head && before.dirty.get(path) === digest)
      continue;
    files.push({ path, sha256: digest });
  }
  return { head_before: before.head, head_after: after.head, files };
}

/** Files the tool left in the output directory (regular files only, relative paths). */
function outputFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) return outputFiles(abs, base);
    if (!entry.isFile()) return [];
    return [relative(base, abs).split(sep).join("/")];
  });
}

/** The last `SUMMARY_BYTES` of `text`, starting at a line boundary. */
function tail(text) {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= SUMMARY_BYTES) return text.trim();
  const window = bytes.subarray(bytes.length - SUMMARY_BYTES).toString("utf8");
  const newline = window.indexOf("\n");
  return `…${(newline >= 0 ? window.slice(newline + 1) : window).trim()}`;
}

function runTool(argv, cwd, input, deadlineMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), {
        cwd,
        env: process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      resolve({ error: String(error?.message ?? error), started });
      return;
    }
    let stdout = "";
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let timedOut = false;
    child.stdout.on("data", (chunk) => {
      stdoutBytes += chunk.length;
      process.stdout.write(chunk);
      // Keep only what the summary can use.
      stdout = (stdout + chunk.toString("utf8")).slice(-4 * SUMMARY_BYTES);
    });
    child.stderr.on("data", (chunk) => {
      stderrBytes += chunk.length;
      process.stderr.write(chunk);
    });
    child.stdin.on("error", () => {}); // a tool that does not read its stdin
    if (input !== null) child.stdin.end(input);
    else child.stdin.end();
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 1000).unref();
    }, deadlineMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ error: String(error?.message ?? error), started });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stdoutBytes, stderrBytes, started });
    });
  });
}

const args = parseArgs(process.argv.slice(2));
const out = process.env.RUNX_ADAPTER_OUT_DIR;
if (out === undefined || out === "") fail("RUNX_ADAPTER_OUT_DIR is not set (run it through runx)");
const packet = JSON.parse(readFileSync(args.packetFile, "utf8"));
const prompt = await readStdin();
const cwd = process.cwd();

let promptFile = null;
if (args.prompt === "file") {
  promptFile = join(out, "prompt.md");
  writeFileSync(promptFile, prompt, { mode: 0o600 });
}
const fill = (arg) =>
  arg
    .split("{prompt_file}")
    .join(promptFile ?? "")
    .split("{packet_file}")
    .join(args.packetFile)
    .split("{out_dir}")
    .join(out);
const tool = args.tool.map(fill);

// Stop the tool a little before the runtime's timeout (10%, at most 5 s) to report in time.
const allowed = Number(process.env.RUNX_ADAPTER_TIMEOUT_MS ?? "600000");
const deadline = Math.max(1000, allowed - Math.min(5000, Math.floor(allowed / 10)));

const inWorktree = isWorktreeTop(cwd);
const before = inWorktree ? snapshotGit(cwd) : null;
const result = await runTool(tool, cwd, args.prompt === "stdin" ? prompt : null, deadline);
const changes = before !== null ? changedFiles(cwd, before) : null;

const name = basename(tool[0]);
const completed = result.error === undefined && result.code === 0 && !result.timedOut;
const how =
  result.error !== undefined
    ? `${name} could not start: ${result.error}`
    : result.timedOut
      ? `${name} ran past ${deadline} ms and was stopped`
      : result.signal !== null
        ? `${name} died from ${result.signal}`
        : `${name} exited with status ${result.code}`;

const record = {
  schema: "runx.command-adapter.result.v1",
  tool: name,
  exit_code: result.code ?? null,
  signal: result.signal ?? null,
  timed_out: result.timedOut ?? false,
  duration_ms: Date.now() - result.started,
  stdout_bytes: result.stdoutBytes ?? 0,
  stderr_bytes: result.stderrBytes ?? 0,
  prompt: args.prompt,
  git: changes,
};
const resultBytes = Buffer.from(`${JSON.stringify(record, null, 2)}\n`);
writeFileSync(join(out, "command-result.json"), resultBytes);

const artifacts = [
  {
    role: "evidence",
    path: "command-result.json",
    sha256: sha256(resultBytes),
    bytes: resultBytes.length,
    media_type: "application/json",
  },
];
// Without a worktree the tool works in the output directory: what it leaves there is its output.
const declared = new Set(["command-result.json", "adapter-output-manifest.json"]);
if (!inWorktree) {
  for (const path of outputFiles(out).sort()) {
    if (declared.has(path) || artifacts.length >= MAX_LISTED) continue;
    const bytes = readFileSync(join(out, path));
    artifacts.push({
      role: path === "prompt.md" ? "other" : "report",
      path,
      sha256: sha256(bytes),
      bytes: bytes.length,
    });
  }
}

const changed = changes?.files.map((f) => f.path) ?? [];
const summaryText =
  result.stdout !== undefined && result.stdout.trim() !== "" ? `\n${tail(result.stdout)}` : "";
const manifest = {
  schema: "adapter-output-manifest.v1",
  packet_id: packet.packet_id,
  run_id: packet.run_id,
  adapter_id: packet.adapter_id,
  status: completed ? "completed" : "failed",
  summary: `${how}${summaryText}`.slice(0, 2048),
  artifacts,
  changed_files: changed.slice(0, MAX_LISTED),
  authority_used: changed.length > 0 ? ["edit_worktree"] : ["read_only"],
  runtime: { name },
  ...(completed
    ? {}
    : {
        failure: {
          code: result.timedOut ? "runtime_timeout" : "runtime_non_zero",
          message: how,
        },
      }),
};
writeFileSync(join(out, "adapter-output-manifest.json"), JSON.stringify(manifest));
// The tool's failure is the adapter's failure: the runtime records runtime_non_zero.
process.exit(completed ? 0 : 1);
