/**
 * A journey-local API and console over their own scratch workspace, for journeys that must
 * restart the API (the shared stack of global-setup.ts runs once per run and must stay up).
 * The console is started once and keeps pointing at the same API port, so the API can be
 * stopped and started again under it, with or without RUNX_API_SESSION_SECRET.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ROOT,
  freePorts,
  startApi,
  startWeb,
  stopService,
} from "../../scripts/console-services.mjs";
import { ARTIFACTS } from "./artifacts.js";
import type { E2eUser } from "./context.js";
import { data, mutate } from "./trpc.js";

/** A journey's own API (restartable) and console. */
export interface LocalStack {
  consoleUrl: string;
  apiUrl: string;
  admin: E2eUser;
  /** Stops the API and starts it again on the same port; `secret` undefined: none set. */
  restartApi(secret: string | undefined): Promise<void>;
  stop(): Promise<void>;
}

/** A random RUNX_API_SESSION_SECRET. */
export function sessionSecret(): string {
  return randomBytes(32).toString("hex");
}

/** Starts the pair with the API under `secret`, and creates the admin through bootstrap. */
export async function localStack(name: string, secret: string | undefined): Promise<LocalStack> {
  const workspace = mkdtempSync(join(tmpdir(), `runx-e2e-${name}-`));
  mkdirSync(join(workspace, "home"), { recursive: true });
  cpSync(join(ROOT, "skills", "echo"), join(workspace, "skills", "echo"), { recursive: true });
  const logs = join(ARTIFACTS, "logs");
  mkdirSync(logs, { recursive: true });
  const apiLog: WriteStream = createWriteStream(join(logs, `${name}-api.log`));
  const webLog: WriteStream = createWriteStream(join(logs, `${name}-web.log`));
  const [apiPort, webPort] = (await freePorts(2)) as [number, number];
  const consoleUrl = `http://127.0.0.1:${webPort}`;
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(workspace, "home"),
    LANG: process.env.LANG ?? "C.UTF-8",
    RUNX_WORKSPACE: workspace,
    RUNX_HOME: join(workspace, "home", ".runx"),
    RUNX_API_PORT: String(apiPort),
    RUNX_API_HOST: "127.0.0.1",
    RUNX_API_ORIGINS: consoleUrl,
    RUNX_API_WORKERS: "1",
  };
  const children: { api?: ChildProcess; web?: ChildProcess } = {};
  const stop = async () => {
    if (children.web !== undefined) await stopService(children.web);
    if (children.api !== undefined) await stopService(children.api);
    apiLog.end();
    webLog.end();
    rmSync(workspace, { recursive: true, force: true });
  };
  const start = async (withSecret: string | undefined) => {
    apiLog.write(`--- API start (${withSecret === undefined ? "no" : "a"} session secret)\n`);
    const env = { ...baseEnv };
    if (withSecret !== undefined) env.RUNX_API_SESSION_SECRET = withSecret;
    return startApi({ env, onLine: (line) => apiLog.write(`${line}\n`) });
  };
  try {
    const api = await start(secret);
    children.api = api.child;
    if (api.bootstrapUrl === null) throw new Error("a fresh API printed no bootstrap URL");
    const token = new URL(api.bootstrapUrl).searchParams.get("token") ?? "";
    const admin: E2eUser = {
      username: "root",
      password: `pw-${randomBytes(12).toString("base64url")}`,
      role: "admin",
    };
    data(
      await mutate(
        api.apiUrl,
        "auth.bootstrap",
        { token, username: admin.username, password: admin.password },
        { origin: consoleUrl },
      ),
    );
    const web = await startWeb({
      port: webPort,
      apiUrl: api.apiUrl,
      env: { PATH: process.env.PATH, HOME: baseEnv.HOME, LANG: baseEnv.LANG },
      onLine: (line) => webLog.write(`${line}\n`),
    });
    children.web = web.child;
    return {
      consoleUrl,
      apiUrl: api.apiUrl,
      admin,
      async restartApi(next) {
        if (children.api !== undefined) await stopService(children.api);
        children.api = undefined;
        children.api = (await start(next)).child;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
