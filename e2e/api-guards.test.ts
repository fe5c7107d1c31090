/**
 * Journeys at the HTTP boundary: unauthenticated calls get 401; a cross-site POST (another
 * site's Origin, no CSRF token) is refused — from Node against the API and through the
 * console's proxy, and from a real page on another site in Chromium. Each refusal is checked
 * to have changed nothing, against a control call that does succeed.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import { apiQuery, apiSession, journey, stack } from "./harness/journey.js";
import { mutate, query } from "./harness/trpc.js";
import type { Session } from "./harness/trpc.js";

const EVIL = "https://evil.example";
const runCount = async (session: Session) =>
  (await apiQuery<{ items: unknown[] }>(session, "runs.list", { limit: 500 })).items.length;

describe("unauthenticated API calls get 401", () => {
  const bases = () => [
    ["the API", stack().apiUrl],
    ["the console proxy", stack().consoleUrl],
  ];
  it.each(["runs.list", "approvals.pending", "auth.me"])("query %s", async (path) => {
    for (const [where, base] of bases()) {
      const res = await query(base!, path, path === "runs.list" ? {} : undefined);
      expect(res.status, `${path} via ${where}`).toBe(401);
    }
  });
  it("mutations runs.start and approvals.decide", async () => {
    const admin = await apiSession(stack().admin);
    const before = await runCount(admin);
    for (const [where, base] of bases()) {
      const origin = { origin: stack().consoleUrl };
      const start = await mutate(
        base!,
        "runs.start",
        { skill: "skills/echo", inputs: { message: "x" } },
        origin,
      );
      expect(start.status, `runs.start via ${where}`).toBe(401);
      const decide = await mutate(
        base!,
        "approvals.decide",
        {
          runId: "run_default_0000000000000000",
          gateId: "gated.release",
          decision: "approve",
          reason: "x",
        },
        origin,
      );
      expect(decide.status, `approvals.decide via ${where}`).toBe(401);
    }
    expect(await runCount(admin)).toBe(before);
  });
});

describe("a cross-site POST without the CSRF token is refused", () => {
  const start = { skill: "skills/echo", inputs: { message: "cross-site" } };

  it("from Node, with the admin's session cookie (API and console proxy)", async () => {
    const { apiUrl, consoleUrl } = stack();
    const admin = await apiSession(stack().admin);
    const before = await runCount(admin);
    for (const base of [apiUrl, consoleUrl]) {
      const crossSite = await mutate(base, "runs.start", start, {
        origin: EVIL,
        cookie: admin.cookie,
      });
      expect(crossSite.status, `cross-site via ${base}`).toBe(403);
      const noToken = await mutate(base, "runs.start", start, {
        origin: consoleUrl,
        cookie: admin.cookie,
      });
      expect(noToken.status, `no CSRF token via ${base}`).toBe(403);
      const wrongToken = await mutate(base, "runs.start", start, {
        origin: consoleUrl,
        cookie: admin.cookie,
        "x-csrf-token": `${admin.csrf}x`,
      });
      expect(wrongToken.status, `wrong CSRF token via ${base}`).toBe(403);
    }
    // Another site's Origin is refused even with the right token.
    const evilWithToken = await mutate(apiUrl, "runs.start", start, {
      origin: EVIL,
      cookie: admin.cookie,
      "x-csrf-token": admin.csrf,
    });
    expect(evilWithToken.status).toBe(403);
    expect(await runCount(admin)).toBe(before);

    // Control: the same call from the console's origin with the token goes through.
    const ok = await mutate(apiUrl, "runs.start", start, {
      origin: consoleUrl,
      cookie: admin.cookie,
      "x-csrf-token": admin.csrf,
    });
    expect(ok.status).toBe(200);
    expect(await runCount(admin)).toBe(before + 1);
  });

  describe("from a page on another site, in Chromium, while the admin is signed in", () => {
    let browser: Browser;
    let evil: Server | undefined;
    let evilUrl: string;
    beforeAll(async () => {
      browser = await launchChromium();
      const target = `${stack().consoleUrl}/trpc/runs.start`;
      // text/plain forms need no CORS preflight: the classic CSRF vector.
      const html = `<!doctype html><title>evil</title>
<form id="f" method="POST" enctype="text/plain" action="${target}">
<input type="hidden" name='{"skill":"skills/echo","inputs":{"message":"csrf' value='"}}'>
</form><script>document.getElementById("f").submit()</script>`;
      const server = createServer((_, res) =>
        res.writeHead(200, { "content-type": "text/html" }).end(html),
      );
      evil = server;
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      // "localhost" is another site than "127.0.0.1" (the console's host).
      evilUrl = `http://localhost:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(async () => {
      await browser?.close();
      const server = evil;
      if (server !== undefined) await new Promise((resolve) => server.close(resolve));
    });

    it("a form auto-submitted to /trpc/runs.start is refused and starts nothing", async () => {
      const admin = await apiSession(stack().admin);
      const before = await runCount(admin);
      await journey(browser, "cross-site-post", async (j) => {
        const page = await j.signIn(stack().admin);
        await j.shot(page, "signed-in");
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith("/trpc/runs.start"), { timeout: 20_000 }),
          page.goto(evilUrl),
        ]);
        expect([401, 403]).toContain(response.status());
        await page.waitForLoadState();
        await j.shot(page, "refused");
      });
      expect(await runCount(admin)).toBe(before);
    });
  });
});
