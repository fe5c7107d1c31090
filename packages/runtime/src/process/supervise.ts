/**
 * Supervision of one runner child process. The child gets the exact argv with no
 * shell interpretation, leads its own process group and is contained with everything it
 * starts (containment.ts: a cgroup per run where the host allows one, else tracking of its
 * descendants); every way the run can end — timeout, caller abort, or the leader exiting —
 * takes the whole tree down with it, including processes that left the group with `setsid`.
 * Output is captured up to a bound per stream while the full stream is still counted and
 * hashed.
 *
 * Cancellation arrives through the caller's AbortSignal.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createSha256 } from "../crypto/sha256.js";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import { containRun, type Containment, type ContainmentKind } from "./containment.js";
import {
  coveredArgv,
  stateCoverAvailable as coverAvailable,
  type StateCoverRequest,
  type StateIsolation,
} from "./state-cover.js";

/** Runs a state-cover probe (state-cover.ts): an empty environment, no output, 5 s at most. */
function runProbe(argv: readonly string[]): boolean {
  const [command, ...args] = argv;
  if (command === undefined) return false;
  // An empty environment. The console's typecheck sees this file with Next's ambient types,
  // which make NODE_ENV mandatory in every ProcessEnv; the runtime's own does not.
  const env = {} as NodeJS.ProcessEnv;
  return spawnSync(command, args, { env, stdio: "ignore", timeout: 5000 }).status === 0;
}

/** Whether skill processes can be kept from runx's state on this host (probed once). */
export function stateCoverAvailable(): boolean {
  return coverAvailable(runProbe);
}

/** Bytes retained per stream unless the caller says otherwise. */
export const DEFAULT_MAX_BYTES_PER_STREAM = 8 * 1024 * 1024;
/** Time between SIGTERM and SIGKILL after a timeout. */
export const DEFAULT_GRACE_MS = 2000;
/** Time between SIGTERM and SIGKILL after an abort; Ctrl-C cleanup must fit in 2 s. */
export const DEFAULT_ABORT_GRACE_MS = 1000;
/** After the leader is gone, how long stray pipe holders outside the group may keep us waiting. */
const PIPE_DRAIN_MS = 2000;

/** What to run and under which limits. */
export interface SuperviseOptions {
  /** Executable, resolved through the child's PATH when it has no slash. */
  command: string;
  args: readonly string[];
  /** Working directory; must exist. */
  cwd: string;
  /** The child's complete environment; nothing is inherited. */
  env: Readonly<Record<string, string>>;
  /** Bytes written to stdin, which is then closed; absent means stdin is closed at once. */
  stdin?: Uint8Array | string | undefined;
  /** Wall-clock limit; absent means none. */
  timeoutMs?: number | undefined;
  /** SIGTERM-to-SIGKILL grace after a timeout (default 2000 ms). */
  graceMs?: number | undefined;
  /** SIGTERM-to-SIGKILL grace after an abort (default 1000 ms). */
  abortGraceMs?: number | undefined;
  /** Aborting terminates the process group and marks the result `interrupted`. */
  signal?: AbortSignal | undefined;
  /** Bytes retained per stream (default 8 MiB); the full stream is still hashed and counted. */
  maxBytesPerStream?: number | undefined;
  /** Combined bytes of both streams past which the group is terminated (`outputLimited`). */
  hardOutputBytes?: number | undefined;
  /** How the process tree is contained (default `auto`: a cgroup when one can be made). */
  containment?: "auto" | ContainmentKind | undefined;
  /**
   * runx's own state, covered from the process where the host allows it (state-cover.ts);
   * absent for processes that are not a skill's (adapters' agent CLIs, probes).
   */
  hideState?: StateCoverRequest | undefined;
}

/** How a supervised process ended and what it wrote. */
export interface SupervisedProcessResult {
  /** Exit status of the leader, or null when it died from a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  interrupted: boolean;
  /** The combined output passed `hardOutputBytes` and the group was terminated. */
  outputLimited: boolean;
  stdout: Buffer;
  stderr: Buffer;
  /** Total bytes the child wrote, including any beyond the retention bound. */
  stdoutBytes: number;
  stderrBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** `sha256:<hex>` of the full stream. */
  stdoutSha256: string;
  stderrSha256: string;
  durationMs: number;
  /** Process id of the leader (also its process group id). */
  pid: number;
  /** The mechanism that contained the process tree. */
  containment: ContainmentKind;
  /** Whether runx's own state was covered from the process (`none`: visible as before). */
  stateIsolation: StateIsolation;
}

/** Retains a prefix of a stream while hashing and counting all of it. */
class StreamCapture {
  private readonly chunks: Buffer[] = [];
  private readonly hash = createSha256();
  private kept = 0;
  total = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.hash.update(chunk);
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
      return;
    }
    if (chunk.length > 0) this.truncated = true;
    if (room > 0) {
      this.chunks.push(chunk.subarray(0, room));
      this.kept += room;
    }
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }

  digest(): string {
    return `sha256:${this.hash.digestHex()}`;
  }
}

/** Why a process could not start, in words, by errno. */
const SPAWN_REASONS: Readonly<Record<string, string>> = {
  ENOENT: "command not found",
  EACCES: "permission denied",
  EISDIR: "it is a directory",
  ENOEXEC: "not an executable format",
  E2BIG: "its arguments and environment are too large for the system (E2BIG)",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  EAGAIN: "the system cannot start another process now",
  ENOMEM: "out of memory",
};

function spawnFailure(command: string, error: unknown): RuntimeError {
  const code = (error as NodeJS.ErrnoException).code ?? "UNKNOWN";
  // A NUL byte or a non-string argument is refused by Node before any syscall.
  const reason =
    SPAWN_REASONS[code] ??
    (code === "ERR_INVALID_ARG_VALUE" || code === "ERR_INVALID_ARG_TYPE"
      ? "an argument or environment value is not a valid C string"
      : `spawn failed (${code})`);
  return new RuntimeError("SPAWN_FAILED", `cannot start ${command}: ${reason}`, {
    command,
    errno: code,
  });
}

function failure(command: string, errno: string): RuntimeError {
  return spawnFailure(command, Object.assign(new Error(errno), { code: errno }));
}

/** Whether `path` is an executable regular file; the errno that says why not otherwise. */
function executable(path: string): true | string {
  try {
    if (statSync(path).isDirectory()) return "EISDIR";
    accessSync(path, constants.X_OK);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "ENOENT";
  }
}

/**
 * Refuses a command that cannot be executed before anything is spawned, the way execvp would
 * find it: through the child's PATH when it has no slash, else relative to its cwd. (Under a
 * cgroup the process is a shell prologue that `exec`s the command, so a missing command would
 * otherwise show as the shell's exit 127 instead of SPAWN_FAILED.)
 */
export function assertExecutable(command: string, cwd: string, path: string | undefined): void {
  if (command.includes("/")) {
    const found = executable(isAbsolute(command) ? command : resolve(cwd, command));
    if (found !== true) throw failure(command, found);
    return;
  }
  let denied: string | undefined;
  for (const dir of (path ?? "/usr/bin:/bin").split(delimiter)) {
    const found = executable(join(resolve(cwd, dir === "" ? "." : dir), command));
    if (found === true) return;
    if (found === "EACCES") denied = found;
  }
  throw failure(command, denied ?? "ENOENT");
}

function assertDirectory(cwd: string, command: string): void {
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new RuntimeError(
      "SPAWN_FAILED",
      `cannot start ${command}: working directory does not exist`,
      {
        command,
      },
    );
  }
}

/**
 * Runs one process to completion under supervision. Rejects with SPAWN_FAILED when the
 * process cannot start and INTERRUPTED when the signal is already aborted; every other ending
 * (nonzero exit, timeout, abort while running) resolves with a result.
 */
export function superviseProcess(opts: SuperviseOptions): Promise<SupervisedProcessResult> {
  const { command } = opts;
  if (opts.signal?.aborted === true) {
    return Promise.reject(
      new RuntimeError("INTERRUPTED", `${command} was not started: run interrupted`),
    );
  }
  try {
    assertDirectory(opts.cwd, command);
    assertExecutable(command, opts.cwd, opts.env.PATH);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  const limit = opts.maxBytesPerStream ?? DEFAULT_MAX_BYTES_PER_STREAM;
  const started = process.hrtime.bigint();
  const contained: Containment = containRun(opts.containment);
  const covered =
    opts.hideState === undefined
      ? undefined
      : coveredArgv(opts.hideState, opts.cwd, command, opts.args, opts.env, runProbe);
  const argv =
    covered === undefined
      ? contained.wrap(command, opts.args, opts.env)
      : contained.wrap(covered.command, covered.args, opts.env);
  let child: ChildProcess;
  try {
    child = spawn(argv.command, argv.args, {
      cwd: opts.cwd,
      // apps/web type-checks this file (through the API's router type) under Next.js's globals,
      // where ProcessEnv requires NODE_ENV; the child's environment is exactly opts.env.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
      env: { ...opts.env } as NodeJS.ProcessEnv,
      shell: false,
      detached: true,
      windowsHide: true,
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
  } catch (error) {
    contained.release();
    return Promise.reject(spawnFailure(command, error));
  }

  return new Promise<SupervisedProcessResult>((resolve, reject) => {
    const stdout = new StreamCapture(limit);
    const stderr = new StreamCapture(limit);
    const timers: NodeJS.Timeout[] = [];
    let terminating = false;
    let timedOut = false;
    let interrupted = false;
    let outputLimited = false;
    let leaderExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;

    const pgid = (): number | undefined => child.pid;

    // Safety net for an abrupt process.exit() in the parent: the tree must not outlive us.
    const onParentExit = (): void => contained.release();

    const cleanup = (): void => {
      for (const timer of timers) clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      process.removeListener("exit", onParentExit);
    };

    const terminate = (graceMs: number): void => {
      if (terminating || pgid() === undefined) return;
      terminating = true;
      contained.signal("SIGTERM");
      timers.push(setTimeout(() => contained.signal("SIGKILL"), graceMs));
    };

    function onAbort(): void {
      if (terminating || leaderExit !== undefined) return;
      interrupted = true;
      terminate(opts.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS);
    }

    const finish = (): void => {
      if (settled || leaderExit === undefined) return;
      settled = true;
      cleanup();
      resolve({
        exitCode: leaderExit.code,
        signal: leaderExit.signal,
        timedOut,
        interrupted,
        outputLimited,
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutBytes: stdout.total,
        stderrBytes: stderr.total,
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        stdoutSha256: stdout.digest(),
        stderrSha256: stderr.digest(),
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e6),
        pid: child.pid ?? -1,
        containment: contained.kind,
        stateIsolation: covered === undefined ? "none" : "mount-namespace",
      });
    };

    const overHardLimit = (): void => {
      if (opts.hardOutputBytes === undefined || outputLimited || leaderExit !== undefined) return;
      if (stdout.total + stderr.total <= opts.hardOutputBytes) return;
      outputLimited = true;
      terminate(opts.graceMs ?? DEFAULT_GRACE_MS);
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout.push(chunk);
      overHardLimit();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      overHardLimit();
    });

    child.once("error", (error) => {
      if (settled) return;
      if (child.pid === undefined) {
        // The process never started: nothing to reap or kill, only the cgroup to remove.
        settled = true;
        cleanup();
        contained.release();
        reject(spawnFailure(command, error));
      }
    });

    child.once("exit", (code, signal) => {
      leaderExit = { code, signal };
      // Members left behind by the leader (in its group or escaped from it) would keep our
      // pipes open and outlive the run.
      contained.release();
      // Pipes held by processes that left the group cannot be waited on forever.
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, PIPE_DRAIN_MS),
      );
    });

    child.once("close", () => finish());

    if (child.pid !== undefined) {
      contained.attach(child.pid);
      process.on("exit", onParentExit);
      if (opts.timeoutMs !== undefined) {
        timers.push(
          setTimeout(() => {
            if (terminating || leaderExit !== undefined) return;
            timedOut = true;
            terminate(opts.graceMs ?? DEFAULT_GRACE_MS);
          }, opts.timeoutMs),
        );
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
    }

    if (child.stdin) {
      // A child that exits without reading its input must not crash the parent with EPIPE.
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.stdin);
    }
  });
}
