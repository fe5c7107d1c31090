/**
 * The one place the adapter subsystem starts processes: the adapter
 * itself and the preflight probes (git, the tool's version). Both go through the runtime's
 * process supervisor: no shell, its own process group, an environment built from nothing,
 * stdin then closed, a timeout and cancellation that SIGTERM the group and SIGKILL it after
 * the grace period, and a hard output cap. Streams become bounded logs, cut at a line
 * boundary with a marker and redacted before anything is written.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { superviseProcess } from "../process/supervise.js";
import type { SupervisedProcessResult } from "../process/supervise.js";
import { sha256Prefixed } from "../receipts/index.js";
import type { TaintSet } from "../redaction.js";
import type { AdapterLimits } from "./definition.js";
import type { ProbeRunner } from "./preflight.js";

/** What to launch. */
export interface LaunchSpec {
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  stdin: string | undefined;
  limits: AdapterLimits;
  /** Aborting cancels the attempt (`cancelled`). */
  signal: AbortSignal;
  /** A file whose appearance cancels the attempt (CLI / console cancel from another process). */
  cancelFile?: string;
}

/** How the process ended. */
export interface LaunchResult {
  process: SupervisedProcessResult;
  cancelled: boolean;
  /** A member of the group was still running after the group was killed. */
  orphansDetected: boolean;
}

/** Launches and supervises the adapter process. Rejects only when it cannot start. */
export async function launchAdapterProcess(spec: LaunchSpec): Promise<LaunchResult> {
  const cancel = new AbortController();
  let cancelled = false;
  const onAbort = (): void => {
    cancelled = true;
    cancel.abort();
  };
  spec.signal.addEventListener("abort", onAbort, { once: true });
  const poll =
    spec.cancelFile !== undefined
      ? setInterval(() => {
          if (spec.cancelFile !== undefined && existsSync(spec.cancelFile)) onAbort();
        }, 100)
      : undefined;
  try {
    const [command, ...args] = spec.argv;
    const result = await superviseProcess({
      command: command ?? "",
      args,
      cwd: spec.cwd,
      env: spec.env,
      ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
      timeoutMs: spec.limits.timeout_ms,
      graceMs: spec.limits.grace_ms,
      abortGraceMs: spec.limits.grace_ms,
      signal: cancel.signal,
      maxBytesPerStream: Math.max(spec.limits.max_stdout_bytes, spec.limits.max_stderr_bytes),
      hardOutputBytes: spec.limits.hard_output_bytes,
    });
    return {
      process: result,
      cancelled: cancelled || result.interrupted,
      orphansDetected: await groupSurvives(result.pid),
    };
  } finally {
    if (poll !== undefined) clearInterval(poll);
    spec.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The default preflight probe runner: supervised, no shell, 10 s limit, both streams kept up to
 * 64 KiB each, null when it cannot start.
 */
export function processProbeRunner(env: Readonly<Record<string, string>>): ProbeRunner {
  return async (argv, cwd) => {
    const [command, ...args] = argv;
    try {
      const r = await superviseProcess({
        command: command ?? "",
        args,
        cwd,
        env,
        timeoutMs: 10_000,
        graceMs: 500,
        maxBytesPerStream: 64 * 1024,
      });
      return {
        exitCode: r.exitCode,
        stdout: r.stdout.toString("utf8"),
        stderr: r.stderr.toString("utf8"),
      };
    } catch {
      return null;
    }
  };
}

/**
 * True when a member of the process group `pgid` is still running once the group has been
 * killed (the supervisor SIGKILLs the group when its leader exits). A member that is dead but
 * not yet reaped (a zombie, whose new parent may be a container init that never reaps) has not
 * survived. Linux reads /proc; elsewhere a signal-0 probe of the group answers. The kill is
 * asynchronous, so survivors are looked for a little while before they count.
 */
async function groupSurvives(pgid: number): Promise<boolean> {
  if (pgid <= 0) return false;
  const deadline = Date.now() + 500;
  for (;;) {
    if (!groupRunning(pgid)) return false;
    if (Date.now() >= deadline) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function groupRunning(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return entries.some((pid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return false; // gone while we looked
    }
    // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X";
  });
}

/** One retained log. */
export interface LogRecord {
  stream: "stdout" | "stderr";
  path: string;
  bytes_total: number;
  bytes_retained: number;
  truncated: boolean;
  sha256: string;
}

const TOKEN_PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/**
 * Scrubs text before it is persisted: the run's taint set, well-known token shapes, and the
 * workspace root and home directory (so no absolute local path is recorded).
 */
export function scrubText(
  text: string,
  taint: TaintSet,
  roots: { root: string; home?: string | undefined },
): string {
  let out = taint.redactText(text);
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, "[redacted-token]");
  const paths = [roots.root, roots.home].filter(
    (p): p is string => p !== undefined && p.length > 1,
  );
  paths.sort((a, b) => b.length - a.length);
  for (const path of paths)
    out = out.split(path).join(path === roots.root ? "<workspace>" : "<home>");
  return out;
}

/**
 * Keeps at most `cap` bytes, cut at the last newline inside the cap, then a marker naming
 * how much was kept. Returns the text to persist and whether it was cut.
 */
export function boundLog(
  bytes: Buffer,
  total: number,
  cap: number,
): { text: string; truncated: boolean } {
  if (total <= cap && bytes.length <= cap)
    return { text: bytes.toString("utf8"), truncated: false };
  const window = bytes.subarray(0, Math.min(cap, bytes.length));
  const cut = window.lastIndexOf(0x0a);
  const kept = cut >= 0 ? window.subarray(0, cut + 1) : Buffer.alloc(0);
  return {
    text: `${kept.toString("utf8")}[runx: output truncated: ${kept.length} of ${total} bytes retained]\n`,
    truncated: true,
  };
}

/** Writes both logs (bounded, scrubbed) into `dir`; returns their records with relative paths. */
export function writeLogs(
  dir: string,
  relDir: string,
  result: SupervisedProcessResult,
  limits: AdapterLimits,
  scrub: (text: string) => string,
): LogRecord[] {
  const streams: Array<["stdout" | "stderr", Buffer, number, number]> = [
    ["stdout", result.stdout, result.stdoutBytes, limits.max_stdout_bytes],
    ["stderr", result.stderr, result.stderrBytes, limits.max_stderr_bytes],
  ];
  return streams.map(([stream, bytes, total, cap]) => {
    const bounded = boundLog(bytes, total, cap);
    const text = scrub(bounded.text);
    writeFileSync(join(dir, `${stream}.log`), text, { mode: 0o600, flag: "wx" });
    return {
      stream,
      path: `${relDir}/${stream}.log`,
      bytes_total: total,
      bytes_retained: Buffer.byteLength(text),
      truncated: bounded.truncated,
      sha256: sha256Prefixed(text),
    };
  });
}
