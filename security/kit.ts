/**
 * The adversarial suite's kit: the real, built entry points under attack. The API runs as its
 * own process (`apps/api/dist/main.js`, started the way `npm start` starts it), so a fault that
 * would kill it shows as a dead process, not as a failed test worker; the CLI is the built
 * `runx` binary (packages/runtime/src/testing/cli.ts).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ensureApiBuilt, freePorts, startApi, stopService } from "../scripts/console-services.mjs";
import { makeWorkspace, runx } from "../packages/runtime/src/testing/cli.js";
import type { Workspace } from "../packages/runtime/src/testing/cli.js";
import { data, login, mutate, query, sessionHeaders } from "../e2e/harness/trpc.js";
import type { Answer, Session } from "../e2e/harness/trpc.js";

export { makeWorkspace, runx, data, login, mutate, query, sessionHeaders };
export type { Answer, Session, Workspace };

/** The console origin the API under test allows. */
export const ORIGIN = "http://console.test";

/** A password that satisfies the operator contract. */
export function password(): string {
  return `pw-${randomBytes(12).toString("base64url")}`;
}

/** One API process over a scratch workspace. */
export interface ApiProcess {
  ws: Workspace;
  /** Base URL without `/trpc`. */
  url: string;
  child: ChildProcess;
  /** Every line the API printed (stdout and stderr). */
  log: string[];
  /** True while the API process runs. */
  alive(): boolean;
  /** Adds an operator with the CLI (password on stdin) and signs them in. */
  operator(username: string, role: "admin" | "approver" | "viewer"): Promise<Session>;
  /** Headers of a signed-in session for a mutation. */
  headers(session: Session): Record<string, string>;
  /** Stops the API (the workspace stays until `cleanup`). */
  stop(): Promise<void>;
  /** Starts the API again over the same workspace. */
  restart(): Promise<void>;
  /** Stops the API and removes the workspace. */
  cleanup(): Promise<void>;
}

/** Options of `startApiProcess`. */
export interface ApiProcessOptions {
  /** Prepares the workspace (skills, files) before the API starts. */
  prepare?: (ws: Workspace) => void;
  /** Extra environment for the API process. */
  env?: Record<string, string>;
}

/** Builds the API when stale, then starts it over a fresh scratch workspace. */
export async function startApiProcess(options: ApiProcessOptions = {}): Promise<ApiProcess> {
  ensureApiBuilt();
  const ws = makeWorkspace("runx-sec-");
  options.prepare?.(ws);
  const log: string[] = [];
  let current: { child: ChildProcess; apiUrl: string } | null = null;
  const launch = async () => {
    const [port] = await freePorts(1);
    const started = (await startApi({
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: ws.home,
        RUNX_HOME: join(ws.home, ".runx"),
        RUNX_WORKSPACE: ws.root,
        RUNX_API_PORT: String(port),
        RUNX_API_ORIGINS: ORIGIN,
        RUNX_API_WORKERS: "1",
        TZ: "UTC",
        ...options.env,
      },
      onLine: (line: string) => log.push(line),
    })) as { child: ChildProcess; apiUrl: string };
    current = started;
  };
  try {
    await launch();
  } catch (error) {
    ws.cleanup();
    throw error;
  }
  const proc: ApiProcess = {
    ws,
    get url() {
      return current!.apiUrl;
    },
    get child() {
      return current!.child;
    },
    log,
    alive() {
      const child = current?.child;
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async operator(username, role) {
      const pw = password();
      const added = await runx(ws, ["operator", "add", username, "--role", role], {
        stdin: `${pw}\n`,
      });
      if (added.code !== 0) throw new Error(`operator add failed: ${added.stderr}`);
      return login(proc.url, ORIGIN, { username, password: pw });
    },
    headers(session) {
      return sessionHeaders(session, ORIGIN);
    },
    async stop() {
      if (current !== null) await stopService(current.child);
    },
    async restart() {
      await proc.stop();
      await launch();
    },
    async cleanup() {
      await proc.stop();
      ws.cleanup();
    },
  };
  return proc;
}
