/**
 * The only place the CLI reads `process.env`. Everything downstream receives these values
 * explicitly, so the runtime never consults ambient state.
 */
import { join, resolve } from "node:path";
import { readWorkspaceEnv } from "../workspace-env.js";
import type { WorkspaceEnvSnapshot } from "../workspace-env.js";

/** The environment facts the CLI needs, read once at start-up. */
export interface CliEnv {
  /** Workspace base: RUNX_CWD > INIT_CWD > process cwd. */
  workspaceRoot: string;
  /** `$RUNX_HOME` or `~/.runx`. */
  runxHome: string;
  /** RUNX_RECEIPT_DIR when set. */
  receiptDir: string | undefined;
  /** Standard output is an interactive terminal and colours are allowed. */
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  readonly color: boolean;
  /** A frozen copy of the process environment: the baseline for child processes and signer config. */
  processEnv: Readonly<Record<string, string | undefined>>;
  /**
   * The workspace snapshot (process env, then the workspace `.env` for missing names), read
   * on first use so that help and version never depend on workspace state.
   */
  readonly workspace: WorkspaceEnvSnapshot;
}

/**
 * Reads the CLI environment from the current process. The terminal facts are looked up on
 * first use: node:tty loads Node's net and stream modules, which a `--json` command that
 * starts no process never needs.
 */
export function readCliEnv(): CliEnv {
  const env = { ...process.env };
  const base = env.RUNX_CWD ?? env.INIT_CWD ?? process.cwd();
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== "";
  let terminals: { stdout: boolean; stderr: boolean } | undefined;
  // isatty() instead of process.stdout.isTTY: touching process.stdout builds a stream object.
  const tty = (): { stdout: boolean; stderr: boolean } => {
    if (terminals === undefined) {
      const { isatty } = process.getBuiltinModule("node:tty");
      terminals = { stdout: isatty(1), stderr: isatty(2) };
    }
    return terminals;
  };
  const workspaceRoot = resolve(base);
  let snapshot: WorkspaceEnvSnapshot | undefined;
  const frozen = Object.freeze(env);
  return {
    workspaceRoot,
    runxHome: resolve(env.RUNX_HOME ?? join(homeDirectory(env), ".runx")),
    receiptDir: env.RUNX_RECEIPT_DIR,
    get stdoutIsTTY() {
      return tty().stdout;
    },
    get stderrIsTTY() {
      return tty().stderr;
    },
    get color() {
      return tty().stdout && !noColor && env.TERM !== "dumb";
    },
    processEnv: frozen,
    get workspace() {
      return (snapshot ??= readWorkspaceEnv(workspaceRoot, frozen));
    },
  };
}

/**
 * The user's home directory as `os.homedir()` finds it: `$HOME` when set (libuv reads it
 * first), else the password database, through node:os, which is loaded only then.
 */
function homeDirectory(env: Record<string, string | undefined>): string {
  return env.HOME ?? process.getBuiltinModule("node:os").homedir();
}
