/**
 * Restart safety end to end: the built API (dist/main.js) starts a slow run in its worker
 * pool, is killed mid-run, starts again, and the run is a resumable pause that resumes; and a
 * browser's session cookies across restarts, with and without RUNX_API_SESSION_SECRET.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pidsWithArgv } from "../../../packages/runtime/src/process/test-support.js";
import { pollUntil } from "../../../packages/runtime/src/testing/cli.js";
import { apiFixture, PASSWORD } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { SESSION_ENDED } from "./trpc.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

let fx: ApiFixture;
let token: string;
/** The step's `sleep` is found by this argument: in its own pid namespace, `$$` is not its pid here. */
const SLEEP = `6011${process.pid % 10_000}`;
/** Stops the orphaned step process, as a reboot would. */
function killSleep(): void {
  for (const pid of pidsWithArgv(["sleep", SLEEP])) process.kill(pid, "SIGKILL");
}
const children: ChildProcess[] = [];

beforeEach(async () => {
  fx = apiFixture();
  const marker = join(fx.ws.root, "slow.pid");
  // First run: leave a marker and sleep (the API is killed meanwhile); later runs echo.
  fx.ws.write(
    "skills/slow/slow.sh",
    `if [ ! -e ${marker} ]; then echo started > ${marker}; exec sleep ${SLEEP}; fi\ncat\n`,
  );
  fx.ws.write("skills/slow/SKILL.md", "---\nname: slow\n---\nSleeps once, then echoes.\n");
  fx.ws.write(
    "skills/slow/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: sh",
      "    args: [slow.sh]",
      "    input_mode: stdin",
      "    timeout_seconds: 120",
      "    inputs:",
      "      message: {type: string, required: true}",
      "",
    ].join("\n"),
  );
  const op = await fx.runtime.console.operators.add({
    username: "alice",
    role: "approver",
    password: PASSWORD,
  });
  token = (await fx.runtime.console.operators.createToken(op.id, "test")).token;
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  killSleep();
  fx.cleanup();
});

async function startApi(
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; base: string; lines: string[] }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...extraEnv,
      PATH: process.env.PATH,
      HOME: fx.ws.home,
      RUNX_WORKSPACE: fx.ws.root,
      RUNX_HOME: fx.ws.home,
      RUNX_API_PORT: "0",
      RUNX_API_HOST: "127.0.0.1",
      RUNX_API_ORIGINS: "http://console.test",
      RUNX_API_WORKERS: "1",
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
  const listening = await pollUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`API exited: ${stderr}`);
      return lines.find((l) => l.startsWith("runx api listening on "));
    },
    { timeoutMs: 15_000, what: "the API to listen" },
  );
  expect(listening).toMatch(/^runx api listening on http:\/\/127\.0\.0\.1:\d+$/);
  return { child, base: `${listening.slice("runx api listening on ".length)}/trpc`, lines };
}

async function call(base: string, path: string, input: unknown, method: "GET" | "POST") {
  const url =
    method === "GET"
      ? `${base}/${path}?input=${encodeURIComponent(JSON.stringify(input))}`
      : `${base}/${path}`;
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(method === "POST" ? { body: JSON.stringify(input) } : {}),
  });
  const body = (await res.json()) as { result?: { data: unknown }; error?: unknown };
  if (body.result === undefined) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
  return body.result.data as Record<string, unknown>;
}

describe("API restart", () => {
  it("turns a run the killed API left running into a resumable pause that resumes", async () => {
    const first = await startApi();
    const started = await call(
      first.base,
      "runs.start",
      { skill: "skills/slow", inputs: { message: "after restart" } },
      "POST",
    );
    expect(started).toMatchObject({ state: "running" });
    const runId = started.runId as string;
    expect(fx.runtime.console.runs.detail(runId).run.status).toBe("running");

    first.child.kill("SIGKILL");
    await pollUntil(() => first.child.exitCode !== null || first.child.signalCode !== null, {
      what: "the API to die",
    });
    // The orphaned step process is not ours to keep: stop it like a reboot would.
    killSleep();

    const second = await startApi();
    expect(
      second.lines.find((l) => l.startsWith(`runx recover: ${runId} (start) paused:`)),
    ).toMatch(/interrupted: the process running it \(pid \d+/);
    const detail = await call(second.base, "runs.get", { runId }, "GET");
    expect(detail.run).toMatchObject({ status: "needs_agent", disposition: "deferred" });
    expect(detail.pendingRequests).toMatchObject([
      { id: "interrupted", kind: "input", questions: [] },
    ]);

    const resumed = await call(second.base, "runs.resume", { runId }, "POST");
    expect(resumed).toMatchObject({
      state: "settled",
      envelope: { status: "sealed", run_id: runId, result: { message: "after restart" } },
    });
    // The deferred pause and the sealed continuation are both receipts of the run.
    const dag = await call(second.base, "receipts.dag", { runId }, "GET");
    expect((dag.nodes as unknown[]).length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

async function stopApi(api: { child: ChildProcess }): Promise<void> {
  api.child.kill("SIGTERM");
  await pollUntil(() => api.child.exitCode !== null || api.child.signalCode !== null, {
    timeoutMs: 15_000,
    what: "the API to stop",
  });
}

/** One browser-like call: cookies in, status, JSON body and Set-Cookie out. */
async function browserCall(
  base: string,
  path: string,
  input: unknown,
  headers: Record<string, string>,
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
    error?: { message: string; code: unknown };
  };
  return { status: res.status, body, setCookie: res.headers.getSetCookie() };
}

describe("sessions across API restarts", () => {
  it("keep working with RUNX_API_SESSION_SECRET; without it the old cookies are expired and sign-in works over them", async () => {
    const secret = { RUNX_API_SESSION_SECRET: randomBytes(32).toString("hex") };
    const login = { username: "alice", password: PASSWORD };
    const first = await startApi(secret);
    const signedIn = await browserCall(first.base, "auth.login", login, {});
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.setCookie.map((c) => c.split(";")[0]).join("; ");
    const csrf = signedIn.body.result!.data.csrfToken as string;
    await stopApi(first);

    // Same secret: the same cookies are the same session, mutations included.
    const second = await startApi(secret);
    const me = await browserCall(second.base, "auth.me", {}, { cookie }, "GET");
    expect(me.status).toBe(200);
    expect(me.body.result?.data).toMatchObject({ username: "alice" });
    const token = await browserCall(
      second.base,
      "auth.createToken",
      { name: "after-restart" },
      { cookie, "x-csrf-token": csrf },
    );
    expect(token.status).toBe(200);
    await stopApi(second);

    // No secret (a fresh random key per start): the cookies no longer verify.
    const third = await startApi();
    const ended = await browserCall(third.base, "auth.me", {}, { cookie }, "GET");
    expect(ended.status).toBe(401);
    expect(ended.body.error?.message).toBe(SESSION_ENDED);
    expect(typeof ended.body.error?.code).toBe("number");
    for (const name of ["runx_session", "runx_csrf"]) {
      expect(ended.setCookie.find((c) => c.startsWith(`${name}=;`))).toMatch(/Max-Age=0/);
    }
    const status = await browserCall(third.base, "auth.status", {}, { cookie }, "GET");
    expect(status.body.result?.data).toMatchObject({ operator: null, sessionEnded: true });
    // The sign-in page's call, old cookies and CSRF header still sent: it signs in.
    const again = await browserCall(third.base, "auth.login", login, {
      cookie,
      "x-csrf-token": csrf,
    });
    expect(again.status).toBe(200);
    expect(again.body.result?.data).toMatchObject({ operator: { username: "alice" } });
  }, 60_000);
});
