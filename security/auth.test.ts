/**
 * Authentication abuse against the API process: password guessing is throttled per account
 * and per client address (429 with Retry-After, logged without the password), Bearer guessing
 * likewise; a session ends server-side on logout and when its operator is disabled; API
 * tokens can be listed and revoked by their owner and by an admin; the last active admin
 * cannot be disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, data, mutate, password, query, runx, startApiProcess } from "./kit.js";
import type { ApiProcess, Session } from "./kit.js";

let api: ApiProcess;
beforeAll(async () => {
  api = await startApiProcess();
}, 120_000);
afterAll(() => api?.cleanup());

interface Attempt {
  status: number;
  retryAfter: string | null;
  body: string;
}

/** One auth.login attempt with the console's Origin (to `api` unless another is given). */
async function attempt(
  username: string,
  pw: string,
  headers: Record<string, string> = {},
  to: ApiProcess = api,
) {
  const res = await fetch(`${to.url}/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: JSON.stringify({ username, password: pw }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: await res.text(),
  } satisfies Attempt;
}

/** Adds an operator through the CLI and returns its password (not signed in). */
async function addOperator(
  username: string,
  role: "admin" | "approver" | "viewer",
  to: ApiProcess = api,
) {
  const pw = password();
  const added = await runx(to.ws, ["operator", "add", username, "--role", role], {
    stdin: `${pw}\n`,
  });
  if (added.code !== 0) throw new Error(`operator add failed: ${added.stderr}`);
  return pw;
}

describe("sign-in throttling", () => {
  it("answers 429 with Retry-After after repeated wrong passwords, even for the right one", async () => {
    const right = await addOperator("brute-target", "approver");
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push((await attempt("brute-target", `wrong-guess-${i}-secret`)).status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses).toContain(429);
    const locked = await attempt("brute-target", right);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(locked.body)).toMatchObject({
      error: { data: { code: "TOO_MANY_REQUESTS", runtimeCode: "RATE_LIMITED" } },
    });
    // The API's log names the account and never a password.
    const lines = api.log.filter((l) => l.includes("throttle"));
    expect(lines.some((l) => l.includes("brute-target"))).toBe(true);
    expect(api.log.join("\n")).not.toContain("wrong-guess-");
    expect(api.log.join("\n")).not.toContain(right);
  });

  it("throttles an unknown account exactly like a known one", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await attempt("no-such-operator", "x")).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses).toContain(429);
  });

  it("throttles one client address spraying many accounts", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await attempt(`spray-${i}`, "guess")).status);
    expect(statuses).toContain(429);
    expect(api.log.some((l) => l.includes("throttle") && l.includes("address"))).toBe(true);
  });

  it("throttles Bearer token guessing from one address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${api.url}/trpc/auth.me`, {
        headers: { authorization: `Bearer runx_guess${i}` },
      });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
  });
});

describe("sessions end server-side", () => {
  let fresh: ApiProcess;
  beforeAll(async () => {
    fresh = await startApiProcess();
  }, 120_000);
  afterAll(() => fresh?.cleanup());

  it("after auth.logout the old cookie answers neither auth.me nor auth.createToken", async () => {
    const s = await fresh.operator("leaver", "viewer");
    expect((await query(fresh.url, "auth.me", undefined, fresh.headers(s))).status).toBe(200);
    const out = await mutate(fresh.url, "auth.logout", {}, fresh.headers(s));
    expect(out.status).toBe(200);
    expect((await query(fresh.url, "auth.me", undefined, fresh.headers(s))).status).toBe(401);
    const token = await mutate(fresh.url, "auth.createToken", { name: "x" }, fresh.headers(s));
    expect(token.status).toBe(401);
  });

  it("disabling an operator ends their sessions and tokens for good (re-enabling revives neither)", async () => {
    const admin = await fresh.operator("boss", "admin");
    const bob = await fresh.operator("bob", "approver");
    const token = data<{ token: string }>(
      await mutate(fresh.url, "auth.createToken", { name: "ci" }, fresh.headers(bob)),
    ).token;
    const bearer = { authorization: `Bearer ${token}` };
    expect((await query(fresh.url, "auth.me", undefined, bearer)).status).toBe(200);
    for (const disabled of [true, false]) {
      const set = await mutate(
        fresh.url,
        "auth.setOperatorDisabled",
        { username: "bob", disabled },
        fresh.headers(admin),
      );
      expect(set.status).toBe(200);
    }
    expect((await query(fresh.url, "auth.me", undefined, fresh.headers(bob))).status).toBe(401);
    expect((await query(fresh.url, "auth.me", undefined, bearer)).status).toBe(401);
  });
});

describe("API tokens: listed and revoked by their owner and by an admin", () => {
  let fresh: ApiProcess;
  let admin: Session;
  let carol: Session;
  let dave: Session;
  beforeAll(async () => {
    fresh = await startApiProcess();
    admin = await fresh.operator("root", "admin");
    carol = await fresh.operator("carol", "viewer");
    dave = await fresh.operator("dave", "viewer");
  }, 120_000);
  afterAll(() => fresh?.cleanup());

  const create = async (s: Session, name: string) =>
    data<{ id: string; token: string }>(
      await mutate(fresh.url, "auth.createToken", { name }, fresh.headers(s)),
    );
  const works = async (token: string) =>
    (await query(fresh.url, "auth.me", undefined, { authorization: `Bearer ${token}` })).status;

  it("the owner lists (without secrets) and revokes their token", async () => {
    const t = await create(carol, "laptop");
    const listed = data<Array<{ id: string; name: string; revokedAt: string | null }>>(
      await query(fresh.url, "auth.listTokens", {}, fresh.headers(carol)),
    );
    expect(listed).toContainEqual(expect.objectContaining({ id: t.id, name: "laptop" }));
    expect(JSON.stringify(listed)).not.toContain(t.token);
    expect(JSON.stringify(listed)).not.toContain("sha256:");
    const revoked = await mutate(
      fresh.url,
      "auth.revokeToken",
      { tokenId: t.id },
      fresh.headers(carol),
    );
    expect(revoked.status).toBe(200);
    expect(await works(t.token)).toBe(401);
  });

  it("another non-admin can neither see nor revoke it; an admin can", async () => {
    const t = await create(carol, "ci");
    const theirs = data<Array<{ id: string }>>(
      await query(fresh.url, "auth.listTokens", {}, fresh.headers(dave)),
    );
    expect(theirs.map((x) => x.id)).not.toContain(t.id);
    const other = await query(
      fresh.url,
      "auth.listTokens",
      { username: "carol" },
      fresh.headers(dave),
    );
    expect(other.status).toBe(403);
    const refused = await mutate(
      fresh.url,
      "auth.revokeToken",
      { tokenId: t.id },
      fresh.headers(dave),
    );
    expect(refused.status).toBe(404);
    expect(await works(t.token)).toBe(200);
    const all = data<Array<{ id: string; username: string }>>(
      await query(fresh.url, "auth.listTokens", { username: "carol" }, fresh.headers(admin)),
    );
    expect(all).toContainEqual(expect.objectContaining({ id: t.id, username: "carol" }));
    const byAdmin = await mutate(
      fresh.url,
      "auth.revokeToken",
      { tokenId: t.id },
      fresh.headers(admin),
    );
    expect(byAdmin.status).toBe(200);
    expect(await works(t.token)).toBe(401);
  });

  it("anonymous callers get 401", async () => {
    expect((await query(fresh.url, "auth.listTokens", {})).status).toBe(401);
    expect(
      (
        await mutate(
          fresh.url,
          "auth.revokeToken",
          { tokenId: "tok_0000000000000000" },
          { origin: ORIGIN },
        )
      ).status,
    ).toBe(401);
  });
});

describe("the last active admin", () => {
  let fresh: ApiProcess;
  beforeAll(async () => {
    fresh = await startApiProcess();
  }, 120_000);
  afterAll(() => fresh?.cleanup());

  it("cannot disable themself, and two admins cannot disable each other at once", async () => {
    const solo = await fresh.operator("solo", "admin");
    const self = await mutate(
      fresh.url,
      "auth.setOperatorDisabled",
      { username: "solo", disabled: true },
      fresh.headers(solo),
    );
    expect(self.status).toBe(409);
    expect(self.body).toMatchObject({ error: { data: { runtimeCode: "LAST_ADMIN" } } });
    expect((await query(fresh.url, "auth.me", undefined, fresh.headers(solo))).status).toBe(200);

    // Two admins disabling each other at once: one wins, and an active admin remains.
    const other = await fresh.operator("other", "admin");
    const [a, b] = await Promise.all([
      mutate(
        fresh.url,
        "auth.setOperatorDisabled",
        { username: "other", disabled: true },
        fresh.headers(solo),
      ),
      mutate(
        fresh.url,
        "auth.setOperatorDisabled",
        { username: "solo", disabled: true },
        fresh.headers(other),
      ),
    ]);
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    const survivor = a.status === 200 ? solo : other;
    const listed = data<Array<{ role: string; disabled: boolean }>>(
      await query(fresh.url, "auth.listOperators", undefined, fresh.headers(survivor)),
    );
    expect(listed.filter((o) => o.role === "admin" && !o.disabled)).toHaveLength(1);
  });
});

describe("the client address behind a trusted proxy (X-Forwarded-For)", () => {
  // The console's /trpc rewrite reaches the API from loopback, which is trusted by default.
  let proxied: ApiProcess;
  beforeAll(async () => {
    proxied = await startApiProcess();
  }, 120_000);
  afterAll(() => proxied?.cleanup());
  const from = (xff: string) => ({ "x-forwarded-for": xff });

  /** Wrong passwords for `count` different accounts, so only the address limit applies. */
  async function spray(count: number, xff: (i: number) => string, to: ApiProcess) {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      statuses.push((await attempt(`spray-${i}`, "guess", from(xff(i)), to)).status);
    }
    return statuses;
  }

  it("blocks the guessing client's address, not the proxy's: other clients still sign in", async () => {
    const right = await addOperator("xff-alice", "approver", proxied);
    const statuses = await spray(25, () => "203.0.113.5", proxied);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses).toContain(429);
    expect((await attempt("xff-alice", right, from("203.0.113.5"), proxied)).status).toBe(429);
    expect((await attempt("xff-alice", right, from("203.0.113.9"), proxied)).status).toBe(200);
    // The proxy's own address (a sign-in without the header) is not blocked either.
    expect((await attempt("xff-alice", right, {}, proxied)).status).toBe(200);
    expect(
      proxied.log.some((l) => l.includes("throttle") && l.includes("address 203.0.113.5 ")),
    ).toBe(true);
  });

  it("counts a client by the address the proxy appended, whatever it puts on the left", async () => {
    const right = await addOperator("xff-bob", "approver", proxied);
    const statuses = await spray(25, (i) => `10.9.0.${i}, 203.0.113.20`, proxied);
    expect(statuses).toContain(429);
    const spoofed = await attempt("xff-bob", right, from("1.2.3.4, 203.0.113.20"), proxied);
    expect(spoofed.status).toBe(429);
    // Neither the spoofed entries nor another client were blocked.
    expect((await attempt("xff-bob", right, from("1.2.3.4"), proxied)).status).toBe(200);
    expect((await attempt("xff-bob", right, from("203.0.113.21"), proxied)).status).toBe(200);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    const direct = await startApiProcess({ env: { RUNX_API_TRUSTED_PROXIES: "192.0.2.1" } });
    try {
      const right = await addOperator("xff-carol", "approver", direct);
      const statuses = await spray(25, () => "203.0.113.5", direct);
      expect(statuses).toContain(429);
      // Every attempt counted against the socket peer (loopback), whatever the header said.
      expect((await attempt("xff-carol", right, from("203.0.113.9"), direct)).status).toBe(429);
      expect(direct.log.some((l) => l.includes("address 127.0.0.1 "))).toBe(true);
    } finally {
      await direct.cleanup();
    }
  }, 120_000);

  it("refuses to start with a setting that is not a list of IP addresses, naming it", async () => {
    for (const bad of ["127.0.0.1,proxy.internal", "127.0.0.1:4000"]) {
      const started = startApiProcess({ env: { RUNX_API_TRUSTED_PROXIES: bad } });
      const error = await started.then(
        async (p) => {
          await p.cleanup();
          return new Error("started");
        },
        (e: unknown) => e as Error,
      );
      expect(error.message).toMatch(/RUNX_API_TRUSTED_PROXIES must be/);
      expect(error.message).toContain(JSON.stringify(bad.split(",").at(-1)));
      // One line naming the setting, not a stack trace.
      expect(error.message).not.toMatch(/\n\s+at /);
    }
  }, 120_000);
});
