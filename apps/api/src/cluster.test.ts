/**
 * Two built API processes (dist/main.js) on loopback ports, each with a workspace of its
 * own, over one fresh PostgreSQL database (RUNX_STATE_URL) and one session secret: the first
 * admin is created exactly once, and a sign-in, a session's end and an API token made on one
 * instance hold on the other. Start-up refusals (no session secret, a URL with a password)
 * are one line without the secret.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { scratchPgState } from "../../../packages/runtime/src/store/pg/test-kit.js";
import type { ScratchPgState } from "../../../packages/runtime/src/store/pg/test-kit.js";
import { makeWorkspace, pollUntil } from "../../../packages/runtime/src/testing/cli.js";
import type { Workspace } from "../../../packages/runtime/src/testing/cli.js";
import { PASSWORD } from "./test-support.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const SECRET = randomBytes(32).toString("hex");

let scratch: ScratchPgState;
beforeAll(async () => {
  scratch = await scratchPgState();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

const children: ChildProcess[] = [];
const workspaces: Workspace[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const ws of workspaces.splice(0)) ws.cleanup();
});

interface Instance {
  child: ChildProcess;
  base: string;
  lines: string[];
  stderr: () => string;
}

function spawnApi(env: Record<string, string>): Instance {
  const ws = makeWorkspace("runx-cluster-");
  workspaces.push(ws);
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: ws.home,
      RUNX_WORKSPACE: ws.root,
      RUNX_HOME: ws.home,
      RUNX_API_PORT: "0",
      RUNX_API_HOST: "127.0.0.1",
      RUNX_API_ORIGINS: "http://console.test",
      RUNX_API_WORKERS: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: string[] = [];
  let buffered = "";
  child.stdout.on("data", (b: Buffer) => {
    buffered += b.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts);
  });
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
  return { child, base: "", lines, stderr: () => stderr };
}

/** Starts an instance and waits until it listens and has printed its bootstrap token. */
async function startApi(): Promise<Instance & { bootstrapToken: string | null }> {
  const api = spawnApi({ RUNX_STATE_URL: scratch.url, RUNX_API_SESSION_SECRET: SECRET });
  const listening = await pollUntil(
    () => {
      if (api.child.exitCode !== null) throw new Error(`API exited: ${api.stderr()}`);
      return api.lines.find((l) => l.startsWith("runx api listening on "));
    },
    { timeoutMs: 20_000, what: "the API to listen" },
  );
  const tokenLine = await pollUntil(() => api.lines.find((l) => l.startsWith("runx bootstrap: ")), {
    timeoutMs: 10_000,
    what: "the bootstrap token",
  });
  return {
    ...api,
    base: `${listening.slice("runx api listening on ".length)}/trpc`,
    bootstrapToken: new URL(tokenLine.slice("runx bootstrap: ".length)).searchParams.get("token"),
  };
}

async function exitOf(api: Instance): Promise<number | null> {
  if (api.child.exitCode !== null) return api.child.exitCode;
  return new Promise((resolve) => api.child.once("exit", (code) => resolve(code)));
}

/** One browser-like call: cookies in, status, JSON body and Set-Cookie out. */
async function call(
  base: string,
  path: string,
  input: unknown,
  headers: Record<string, string> = {},
  method: "GET" | "POST" = "POST",
) {
  const url =
    method === "GET"
      ? `${base}/${path}?input=${encodeURIComponent(JSON.stringify(input))}`
      : `${base}/${path}`;
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json", origin: "http://console.test", ...headers },
    ...(method === "POST" ? { body: JSON.stringify(input) } : {}),
  });
  const body = (await res.json()) as {
    result?: { data: Record<string, unknown> };
    error?: { message: string };
  };
  return { status: res.status, body, setCookie: res.headers.getSetCookie() };
}

describe("API instances on one PostgreSQL state store", () => {
  it("refuse to start without RUNX_API_SESSION_SECRET, or with a password in the URL, in one line", async () => {
    const noSecret = spawnApi({ RUNX_STATE_URL: scratch.url });
    expect(await exitOf(noSecret)).toBe(2);
    expect(noSecret.stderr()).toBe(
      "runx api: RUNX_API_SESSION_SECRET is required with RUNX_STATE_URL (at least 32 bytes, the same on every instance)\n",
    );
    const withPassword = spawnApi({
      RUNX_STATE_URL: "postgres://runx:hunter2-secret@127.0.0.1:5432/runx",
      RUNX_API_SESSION_SECRET: SECRET,
    });
    expect(await exitOf(withPassword)).toBe(2);
    expect(withPassword.stderr()).toBe(
      "runx api: RUNX_STATE_URL must not contain a password; set PGPASSWORD or a password file\n",
    );
  }, 30_000);

  it("create one first admin, and honour a sign-in, its end and an API token across instances", async () => {
    const [a, b] = await Promise.all([startApi(), startApi()]);
    // The store is named without credentials.
    expect(a.lines).toContainEqual(
      expect.stringMatching(/^runx api: state store postgres:\/\/127\.0\.0\.1:\d+\/runx_test_\w+$/),
    );
    expect(a.bootstrapToken).toEqual(expect.any(String));
    expect(b.bootstrapToken).toEqual(expect.any(String));
    expect(a.bootstrapToken).not.toBe(b.bootstrapToken);

    // Both tokens redeemed at once, one on each instance: exactly one admin.
    const raced = await Promise.all([
      call(a.base, "auth.bootstrap", {
        token: a.bootstrapToken,
        username: "ann",
        password: PASSWORD,
      }),
      call(b.base, "auth.bootstrap", {
        token: b.bootstrapToken,
        username: "ben",
        password: PASSWORD,
      }),
    ]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = raced[0].status === 200 ? "ann" : "ben";
    for (const api of [a, b]) {
      const status = await call(api.base, "auth.status", {}, {}, "GET");
      expect(status.body.result?.data).toMatchObject({ bootstrapRequired: false });
    }

    // Signed in on B; the cookies work on A, mutations (CSRF) included.
    const login = await call(b.base, "auth.login", { username: winner, password: PASSWORD });
    expect(login.status).toBe(200);
    const cookie = login.setCookie.map((c) => c.split(";")[0]).join("; ");
    const csrf = login.body.result!.data.csrfToken as string;
    const me = await call(a.base, "auth.me", {}, { cookie }, "GET");
    expect(me.status).toBe(200);
    expect(me.body.result?.data).toMatchObject({ username: winner, role: "admin" });
    const created = await call(
      a.base,
      "auth.createToken",
      { name: "ci" },
      { cookie, "x-csrf-token": csrf },
    );
    expect(created.status).toBe(200);
    const bearer = { authorization: `Bearer ${created.body.result!.data.token as string}` };
    const viaToken = await call(b.base, "auth.me", {}, bearer, "GET");
    expect(viaToken.body.result?.data).toMatchObject({ username: winner });

    // Signing out on A ends the session on B too; the token stays until revoked on B.
    expect((await call(a.base, "auth.logout", {}, { cookie, "x-csrf-token": csrf })).status).toBe(
      200,
    );
    expect((await call(b.base, "auth.me", {}, { cookie }, "GET")).status).toBe(401);
    const revoked = await call(
      b.base,
      "auth.revokeToken",
      { tokenId: created.body.result!.data.id },
      bearer,
    );
    expect(revoked.status).toBe(200);
    expect((await call(a.base, "auth.me", {}, bearer, "GET")).status).toBe(401);
  }, 60_000);
});
