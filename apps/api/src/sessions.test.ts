/**
 * Cookies a browser kept from a session that is over (another signing key, a signed-out or
 * revoked session, a CSRF cookie of another session) never lock a person out: the API
 * expires them, says the session ended, and signing in works with them still present. Every
 * refusal is a tRPC error body that tRPC's own client reads.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiEvents } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import type { AppRouter } from "./router.js";
import { createApiServer } from "./server.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { SESSION_ENDED } from "./trpc.js";

const ORIGIN = "http://console.test";
let fx: ApiFixture;
let server: Server;
let base: string;

beforeEach(async () => {
  fx = apiFixture();
  const events = new ApiEvents();
  server = createApiServer({
    runtime: fx.runtime,
    sessions: sessionKeys(randomBytes(32)),
    executor: inlineExecutor(fx.runtime, events),
    events,
    allowedOrigins: [ORIGIN],
    secureCookies: false,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
  await fx.runtime.console.operators.add({ username: "ada", role: "admin", password: PASSWORD });
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  fx.cleanup();
});

interface Answer {
  status: number;
  body: { result?: { data: unknown }; error?: { message: string; code: unknown; data: unknown } };
  setCookie: string[];
}

async function post(path: string, input: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: JSON.stringify(input),
  });
  return {
    status: res.status,
    body: (await res.json()) as Answer["body"],
    setCookie: res.headers.getSetCookie(),
  };
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/${path}?input=${encodeURIComponent("{}")}`, { headers });
  return {
    status: res.status,
    body: (await res.json()) as Answer["body"],
    setCookie: res.headers.getSetCookie(),
  };
}

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const res = await post("auth.login", { username: "ada", password: PASSWORD });
  expect(res.status).toBe(200);
  return {
    cookie: res.setCookie.map((c) => c.split(";")[0]).join("; "),
    csrf: (res.body.result!.data as { csrfToken: string }).csrfToken,
  };
}

/** A session cookie pair signed with a key this API does not have (a restart, another install). */
async function foreignCookies(): Promise<{ cookie: string; csrf: string }> {
  const other = await sessionKeys(randomBytes(32)).issue("op_0000000000000000", "ses_gone");
  return { cookie: `runx_session=${other.jwt}; runx_csrf=${other.csrf}`, csrf: other.csrf };
}

/** True when the answer expires both session cookies. */
function expiresCookies(setCookie: string[]): boolean {
  return ["runx_session", "runx_csrf"].every((name) =>
    setCookie.some((c) => c.startsWith(`${name}=;`) && /Max-Age=0/.test(c)),
  );
}

describe("stale and foreign session cookies", () => {
  it("expires cookies signed with another key and says the session ended", async () => {
    const old = await foreignCookies();
    const me = await get("auth.me", { cookie: old.cookie });
    expect(me.status).toBe(401);
    expect(me.body.error?.message).toBe(SESSION_ENDED);
    expect(expiresCookies(me.setCookie)).toBe(true);
    const status = await get("auth.status", { cookie: old.cookie });
    expect(status.body.result?.data).toMatchObject({ operator: null, sessionEnded: true });
    expect(expiresCookies(status.setCookie)).toBe(true);
    // Without cookies nothing is said to have ended, and nothing is expired.
    const fresh = await get("auth.status");
    expect(fresh.body.result?.data).toMatchObject({ operator: null, sessionEnded: false });
    expect(fresh.setCookie).toEqual([]);
  });

  it("signs in with the old cookies and their CSRF token still present", async () => {
    const old = await foreignCookies();
    const res = await post(
      "auth.login",
      { username: "ada", password: PASSWORD },
      { cookie: old.cookie, "x-csrf-token": old.csrf },
    );
    expect(res.status).toBe(200);
    expect(res.setCookie.find((c) => c.startsWith("runx_session=ey"))).toBeDefined();
  });

  it("signs in over a live session whose CSRF token the page no longer has", async () => {
    const live = await signIn();
    // Before, this was 403 "missing or wrong CSRF token" and the sign-in page was stuck.
    const res = await post(
      "auth.login",
      { username: "ada", password: PASSWORD },
      {
        cookie: live.cookie,
      },
    );
    expect(res.status).toBe(200);
    const again = res.setCookie.map((c) => c.split(";")[0]).join("; ");
    expect(again).not.toBe(live.cookie);
  });

  it("ends a signed-out session's cookies, and a session whose CSRF cookie is not its own", async () => {
    const first = await signIn();
    const second = await signIn();
    // The first session's JWT with the second's CSRF cookie: a pair that can never pass.
    const jwt = first.cookie.split("; ").find((c) => c.startsWith("runx_session="))!;
    const mixed = `${jwt}; runx_csrf=${second.csrf}`;
    const start = { skill: "skills/echo", inputs: { message: "mixed" } };
    const refused = await post("runs.start", start, { cookie: mixed, "x-csrf-token": second.csrf });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.message).toBe(SESSION_ENDED);
    expect(expiresCookies(refused.setCookie)).toBe(true);
    expect(fx.runtime.console.runs.list({}).items).toHaveLength(0);

    const out = await post(
      "auth.logout",
      {},
      {
        cookie: second.cookie,
        "x-csrf-token": second.csrf,
      },
    );
    expect(out.status).toBe(200);
    const after = await get("auth.me", { cookie: second.cookie });
    expect(after.status).toBe(401);
    expect(after.body.error?.message).toBe(SESSION_ENDED);
    expect(expiresCookies(after.setCookie)).toBe(true);
  });

  it("still refuses a live session's mutation without its CSRF header, without ending it", async () => {
    const live = await signIn();
    const start = { skill: "skills/echo", inputs: { message: "no header" } };
    const refused = await post("runs.start", start, { cookie: live.cookie });
    expect(refused.status).toBe(403);
    expect(refused.setCookie).toEqual([]);
    expect((await get("auth.me", { cookie: live.cookie })).status).toBe(200);
  });
});

describe("refusals tRPC's client can read", () => {
  function client(headers: Record<string, string>) {
    return createTRPCClient<AppRouter>({
      links: [httpLink({ url: base, headers: () => ({ origin: ORIGIN, ...headers }) })],
    });
  }

  async function clientError(promise: Promise<unknown>) {
    const error = await promise.then(
      () => {
        throw new Error("expected a refusal");
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    const e = error as TRPCClientError<AppRouter>;
    return { message: e.message, status: e.data?.httpStatus, code: e.data?.code };
  }

  it("reads the CSRF refusal made before tRPC (not 'Unable to transform response')", async () => {
    const live = await signIn();
    const refused = await clientError(
      client({ cookie: live.cookie, "x-csrf-token": "wrong" }).runs.start.mutate({
        skill: "skills/echo",
        inputs: { message: "x" },
      }),
    );
    expect(refused).toEqual({
      message: "the request did not carry this session's CSRF token; reload the page and try again",
      status: 403,
      code: "FORBIDDEN",
    });
  });

  it("reads a cross-site refusal and a body over the cap", async () => {
    const crossSite = await clientError(
      createTRPCClient<AppRouter>({
        links: [httpLink({ url: base, headers: () => ({ origin: "https://evil.example" }) })],
      }).auth.login.mutate({ username: "ada", password: PASSWORD }),
    );
    expect(crossSite).toMatchObject({ status: 403, code: "FORBIDDEN" });
    const tooBig = await clientError(
      client({}).auth.login.mutate({ username: "ada", password: "x".repeat(2 * 1024 * 1024) }),
    );
    expect(tooBig).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
  });

  it("reads a plain input refusal with its field and code apart from the words", async () => {
    const live = await signIn();
    const res = await post(
      "auth.addOperator",
      { username: "grace", role: "approver", password: "short" },
      { cookie: live.cookie, "x-csrf-token": live.csrf },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      message: "password must be at least 12 characters",
      data: { code: "BAD_REQUEST", runtimeCode: "INPUT_INVALID", path: "password" },
    });
  });
});
