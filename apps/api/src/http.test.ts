import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiEvents } from "./events.js";
import { createApiServer } from "./server.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { WorkerPool } from "./worker-pool.js";

const ORIGIN = "http://console.test";
let fx: ApiFixture;
let server: Server;
let pool: WorkerPool;
let base: string;

beforeEach(async () => {
  fx = apiFixture();
  const events = new ApiEvents();
  pool = new WorkerPool({ size: 1, runtime: fx.options, events });
  server = createApiServer({
    runtime: fx.runtime,
    sessions: sessionKeys(randomBytes(32)),
    executor: pool,
    events,
    allowedOrigins: [ORIGIN],
    secureCookies: false,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
  await fx.runtime.console.operators.add({
    username: "alice",
    role: "approver",
    password: PASSWORD,
  });
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await pool.close();
  fx.cleanup();
});

async function login(): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${base}/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ username: "alice", password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const setCookie = res.headers.getSetCookie();
  expect(setCookie.find((c) => c.startsWith("runx_session="))).toMatch(/HttpOnly/);
  expect(setCookie.find((c) => c.startsWith("runx_session="))).toMatch(/SameSite=Strict/);
  const body = (await res.json()) as { result: { data: { csrfToken: string } } };
  return {
    cookie: setCookie.map((c) => c.split(";")[0]).join("; "),
    csrf: body.result.data.csrfToken,
  };
}

describe("HTTP API", () => {
  it("answers an unauthenticated call with 401", async () => {
    const res = await fetch(`${base}/runs.list?input=${encodeURIComponent("{}")}`);
    expect(res.status).toBe(401);
  });

  it("refuses a cross-site POST and a POST without the CSRF token, and accepts it with the token", async () => {
    const { cookie, csrf } = await login();
    const body = JSON.stringify({ skill: "skills/echo", inputs: { message: "hi" } });
    const headers = { "content-type": "application/json", cookie };
    const crossSite = await fetch(`${base}/runs.start`, {
      method: "POST",
      headers: { ...headers, origin: "https://evil.example", "x-csrf-token": csrf },
      body,
    });
    expect(crossSite.status).toBe(403);
    const noToken = await fetch(`${base}/runs.start`, {
      method: "POST",
      headers: { ...headers, origin: ORIGIN },
      body,
    });
    expect(noToken.status).toBe(403);
    expect(fx.runtime.console.runs.list({}).items).toHaveLength(0);
    const ok = await fetch(`${base}/runs.start`, {
      method: "POST",
      headers: { ...headers, origin: ORIGIN, "x-csrf-token": csrf },
      body,
    });
    expect(ok.status).toBe(200);
    const started = (await ok.json()) as { result: { data: { runId: string } } };
    // The run executes in the worker pool; poll the shared store with a deadline.
    const deadline = Date.now() + 20_000;
    let status = "";
    while (Date.now() < deadline) {
      status = fx.runtime.console.runs.detail(started.result.data.runId).run.status;
      if (status === "sealed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe("sealed");
  });

  it("refuses adapters.cancel without the CSRF token or as a GET", async () => {
    const { cookie, csrf } = await login();
    const body = JSON.stringify({ runId: "run_console_0000000000000000" });
    const headers = { "content-type": "application/json", cookie, origin: ORIGIN };
    const noToken = await fetch(`${base}/adapters.cancel`, { method: "POST", headers, body });
    expect(noToken.status).toBe(403);
    const asGet = await fetch(`${base}/adapters.cancel?input=${encodeURIComponent(body)}`, {
      headers: { cookie },
    });
    expect(asGet.status).toBe(405);
    // With the token it reaches the runtime: this run has no dispatch state.
    const ok = await fetch(`${base}/adapters.cancel`, {
      method: "POST",
      headers: { ...headers, "x-csrf-token": csrf },
      body,
    });
    expect(ok.status).toBe(404);
  });

  it("accepts a Bearer token without cookies or CSRF (automation)", async () => {
    const alice = (await fx.runtime.console.operators.list())[0]!;
    const { token } = await fx.runtime.console.operators.createToken(alice.id, "ci");
    const res = await fetch(`${base}/runs.list?input=${encodeURIComponent("{}")}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const bad = await fetch(`${base}/runs.list?input=${encodeURIComponent("{}")}`, {
      headers: { authorization: `Bearer ${token}x` },
    });
    expect(bad.status).toBe(401);
  });

  it("streams a run's evidence bundle to a viewer: the bundle receipts.bundle gives, verifiable", async () => {
    const env = await fx.runtime.runSkill({
      ref: "skills/echo",
      inputs: { message: { value: "hi" } },
      secretEnv: [],
    });
    const origin = base.slice(0, -"/trpc".length);
    const url = `${origin}/bundle/${encodeURIComponent(env.run_id)}`;
    expect((await fetch(url)).status).toBe(401);
    const { cookie } = await login();
    const res = await fetch(url, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await res.text();
    const streamed = JSON.parse(text) as Record<string, unknown>;
    const queried = await fx.runtime.console.evidence.bundle(env.run_id);
    expect({ ...streamed, generated_at: null }).toEqual({ ...queried, generated_at: null });
    const report = await fx.runtime.verifyBundle(text, { label: "bundle:http" });
    expect(report).toMatchObject({ valid: true, receipt_count: 1 });
    // An unknown run is refused before any of the answer is sent; so is a POST.
    const missing = await fetch(`${origin}/bundle/run_unknown`, { headers: { cookie } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(
      /run_unknown/,
    );
    expect((await fetch(url, { method: "POST", headers: { cookie } })).status).toBe(405);
  });
});
