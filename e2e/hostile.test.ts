/**
 * Journeys against a hostile neighbour: a page on another loopback origin (same host, another
 * port: SameSite cookies do not separate ports) that the console must never send a signed-in
 * operator to after sign-in, and that must not be able to frame the console. Also: every
 * console page carries the security headers, the main pages raise no CSP violation, and the
 * console's `/trpc` proxy refuses oversized bodies before they reach the API. And a receipt's
 * unsigned metadata, edited in the file, is never shown among its signed fields.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import {
  apiMutate,
  apiQuery,
  apiSession,
  eventually,
  journey,
  signInOn,
  stack,
  whoami,
} from "./harness/journey.js";

let browser: Browser;
let evil: Server | undefined;
/** host:port of the hostile page server (127.0.0.1, another port than the console). */
let evilHost: string;
/** Paths the hostile server was asked for. */
const hits: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const consoleUrl = stack().consoleUrl;
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    if ((req.url ?? "").startsWith("/frame.html")) {
      const target = new URL(req.url ?? "", "http://x").searchParams.get("src") ?? "/runs";
      res.writeHead(200, { "content-type": "text/html" }).end(
        `<!doctype html><title>framer</title><h1>framer</h1>
<iframe id="victim" src="${consoleUrl}${target}" width="900" height="600"></iframe>`,
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>landed</title>");
  });
  evil = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  evilHost = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await browser?.close();
  const server = evil;
  if (server !== undefined) await new Promise((resolve) => server.close(resolve));
});

describe("sign-in never redirects off the console", () => {
  // Each is the raw (already URL-encoded) value of `next=`; HOST is the hostile origin.
  const FORMS = [
    "/%09/HOST/landing.html",
    "/%0a/HOST/landing.html",
    "/%0d/HOST/landing.html",
    "/%09%5cHOST/landing.html",
    "/%0d%0a/HOST/landing.html",
    "%09//HOST/landing.html",
    "//HOST/landing.html",
    "///HOST/landing.html",
    "/%5cHOST/landing.html",
    "%5c/HOST/landing.html",
    "%5c%5cHOST/landing.html",
    "/..//HOST/landing.html",
    "/.%2e//HOST/landing.html",
    "/%2F%2FHOST/landing.html",
    "//user:pw@HOST/landing.html",
    "/%09/user@HOST/landing.html",
    "http://HOST/landing.html",
    "http:HOST/landing.html",
    "https:HOST/landing.html",
    "javascript:location.href='http://HOST/landing.html'",
    "JaVaScRiPt%3Alocation.href%3D'http%3A%2F%2FHOST%2Flanding.html'",
    "%0ajavascript:location.href='http://HOST/landing.html'",
    "data:text/html,<script>location.href='http://HOST/landing.html'</script>",
  ];

  it.each(FORMS)("next=%s lands on the console", async (form) => {
    const { consoleUrl, admin } = stack();
    const next = form.replaceAll("HOST", evilHost);
    await journey(browser, "hostile-redirect", async (j) => {
      const page = await j.anonymous();
      const before = hits.length;
      await page.goto(`${consoleUrl}/login?next=${next}`);
      await page.getByLabel("Username").fill(admin.username);
      await page.getByLabel("Password").fill(admin.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      // Wherever the redirect goes, the page leaves /login; on the console it shows whoami.
      await page.waitForURL((url) => url.origin !== consoleUrl || url.pathname !== "/login", {
        timeout: 20_000,
      });
      await page.waitForLoadState();
      expect(new URL(page.url()).origin, `after next=${next}: ${page.url()}`).toBe(consoleUrl);
      await whoami(page, admin);
      expect(hits.slice(before), `the hostile origin was visited for next=${next}`).toEqual([]);
    });
  });

  it("a same-origin deep link with query and hash is kept", async () => {
    const { consoleUrl, admin } = stack();
    await journey(browser, "hostile-redirect-ok", async (j) => {
      const page = await j.anonymous();
      await page.goto(`${consoleUrl}/login?next=${encodeURIComponent("/runs?status=sealed#top")}`);
      await page.getByLabel("Username").fill(admin.username);
      await page.getByLabel("Password").fill(admin.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((url) => url.pathname === "/runs", { timeout: 20_000 });
      const url = new URL(page.url());
      expect(url.search).toBe("?status=sealed");
      expect(url.hash).toBe("#top");
    });
  });
});

describe("the console refuses to be framed", () => {
  it("another loopback origin's iframe shows no console content, even signed in", async () => {
    await journey(browser, "hostile-frame", async (j) => {
      const page = await j.signIn(stack().approver);
      for (const src of ["/runs", "/approvals", "/login"]) {
        const frameResponse = page.waitForResponse(
          (r) =>
            r.url() === `${stack().consoleUrl}${src}` && r.request().frame() !== page.mainFrame(),
          { timeout: 20_000 },
        );
        await page.goto(`http://${evilHost}/frame.html?src=${encodeURIComponent(src)}`);
        const response = await frameResponse;
        const frame = await (await page.locator("#victim").elementHandle())?.contentFrame();
        expect(frame, `the iframe of ${src}`).toBeTruthy();
        await frame!.waitForLoadState("load");
        // A blocked frame is left on Chromium's error page: no console document, no operator.
        expect(await frame!.locator("[data-testid=whoami]").count(), `frame of ${src}`).toBe(0);
        expect(await frame!.locator("form.auth-form").count(), `frame of ${src}`).toBe(0);
        expect(frame!.url(), `frame of ${src}`).not.toContain(stack().consoleUrl);
        expect(response.headers()["x-frame-options"]).toBe("DENY");
        expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
        await j.shot(page, `framed-${src.slice(1)}`);
      }
    });
  });
});

/** Headers every console response must carry (values as sent). */
const STATIC_HEADERS: Record<string, string> = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};
const CSP_DIRECTIVES = [
  "default-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];

function expectCsp(csp: string | null, where: string): void {
  expect(csp, `CSP of ${where}`).not.toBeNull();
  for (const directive of CSP_DIRECTIVES) expect(csp, where).toContain(directive);
  const script = csp!.split(";").find((d) => d.trim().startsWith("script-src"));
  expect(script, `script-src of ${where}`).toMatch(/'nonce-[A-Za-z0-9+/=_-]{16,}'/);
  expect(script, where).not.toContain("'unsafe-inline'");
  expect(script, where).not.toContain("'unsafe-eval'");
}

describe("security headers", () => {
  it("are on every console page, signed in or not, with a fresh script nonce each time", async () => {
    const { consoleUrl } = stack();
    const admin = await apiSession(stack().admin);
    const started = await apiMutate<{ runId: string }>(admin, "runs.start", {
      skill: "skills/echo",
      inputs: { message: "headers" },
    });
    const pages = [
      "/",
      "/login",
      "/login?next=%2Fruns",
      "/bootstrap",
      "/runs",
      "/approvals",
      "/skills",
      "/skills/echo",
      `/runs/${started.runId}`,
      `/runs/${started.runId}/receipts`,
      "/no-such-page",
    ];
    const nonces = new Set<string>();
    for (const path of pages) {
      for (const cookie of [admin.cookie, undefined]) {
        const res = await fetch(`${consoleUrl}${path}`, {
          headers: cookie === undefined ? {} : { cookie },
          redirect: "manual",
        });
        const where = `${path} (${cookie === undefined ? "signed out" : "signed in"}, ${res.status})`;
        for (const [name, value] of Object.entries(STATIC_HEADERS)) {
          expect(res.headers.get(name), `${name} of ${where}`).toBe(value);
        }
        expect(res.headers.get("permissions-policy"), where).toContain("camera=()");
        expectCsp(res.headers.get("content-security-policy"), where);
        const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1]!;
        expect(nonces.has(nonce), `nonce reused on ${where}`).toBe(false);
        nonces.add(nonce);
        if (res.status === 200) {
          const html = await res.text();
          // Every script tag Next rendered carries this response's nonce.
          for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
            expect(tag, `${where}: ${tag}`).toContain(`nonce="${nonce}"`);
          }
        } else await res.body?.cancel();
      }
    }
    // Static assets and the API behind the proxy are no documents, but never sniffed or framed.
    const icon = await fetch(`${consoleUrl}/icon.svg`);
    expect(icon.headers.get("x-content-type-options")).toBe("nosniff");
    expect(icon.headers.get("x-frame-options")).toBe("DENY");
    await icon.body?.cancel();
    for (const base of [consoleUrl, stack().apiUrl]) {
      const res = await fetch(`${base}/trpc/auth.status`);
      expect(res.headers.get("x-content-type-options"), base).toBe("nosniff");
      expect(res.headers.get("content-security-policy"), base).toContain("frame-ancestors 'none'");
      await res.body?.cancel();
    }
  });

  it("the main pages work in Chromium with no CSP violation", async () => {
    await journey(browser, "hostile-csp", async (j) => {
      const page = await j.signIn(stack().admin);
      const violations: string[] = [];
      const watch = (p: Page) => {
        p.on("console", (m) => {
          if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
        });
        p.on("pageerror", (e) => violations.push(`pageerror: ${e.message}`));
      };
      watch(page);
      // A fresh page too, so the login page and the sign-in itself are watched.
      const fresh = await j.anonymous();
      watch(fresh);
      await signInOn(fresh, stack().viewer);

      const admin = await apiSession(stack().admin);
      const { runId } = await apiMutate<{ runId: string }>(admin, "runs.start", {
        skill: "skills/echo",
        inputs: { message: "csp" },
      });
      const { consoleUrl } = stack();
      for (const path of ["/runs", "/approvals", "/skills", "/skills/echo"]) {
        await page.goto(`${consoleUrl}${path}`);
        await page.waitForLoadState("networkidle");
      }
      await page.goto(`${consoleUrl}/runs/${runId}`);
      await page
        .getByTestId("run-status")
        .filter({ hasText: /^\s*sealed\s*$/ })
        .waitFor({ timeout: 30_000 });
      await page.reload();
      await page.getByRole("link", { name: "Root receipt" }).click();
      await page.getByRole("heading", { name: "Receipt", exact: true }).waitFor();
      await page.waitForLoadState("networkidle");
      // The receipts page lays its DAG out in a Web Worker (worker-src).
      await page.goto(`${consoleUrl}/runs/${runId}/receipts`);
      await page.getByTestId("dag-node").first().waitFor({ timeout: 20_000 });
      await page.getByText(/ELK layered \(worker\)/).waitFor({ timeout: 20_000 });
      await page.waitForLoadState("networkidle");
      await j.shot(page, "receipt");
      expect(violations).toEqual([]);
    });
  });
});

describe("the console's /trpc proxy caps request bodies", () => {
  const MIB = 1024 * 1024;

  it("answers 413 to a 50 MiB sign-in body, and stays up", async () => {
    const { consoleUrl } = stack();
    const body = `{"username":"ada","password":"${"x".repeat(50 * MIB)}"}`;
    const res = await fetch(`${consoleUrl}/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: consoleUrl },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("too large");
    // Pages take no bodies at all: the same cap holds for them.
    const page = await fetch(`${consoleUrl}/runs`, {
      method: "POST",
      headers: { "content-type": "text/plain", origin: consoleUrl },
      body,
    });
    expect(page.status).toBe(413);
    await page.body?.cancel();
    const ok = await fetch(`${consoleUrl}/trpc/auth.status`);
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it("refuses a body of unknown length (chunked) instead of forwarding part of it", async () => {
    const { consoleUrl } = stack();
    const chunk = new TextEncoder().encode("x".repeat(MIB));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 12) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${consoleUrl}/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: consoleUrl },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect([411, 413]).toContain(res.status);
    await res.body?.cancel();
  });

  it("still forwards an ordinary call (a wrong password is the API's 401)", async () => {
    const { consoleUrl } = stack();
    const res = await fetch(`${consoleUrl}/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: consoleUrl },
      body: JSON.stringify({ username: "nobody", password: "not-the-password" }),
    });
    expect(res.status).toBe(401);
    await res.body?.cancel();
  });
});

/** What the metadata journey reads of `runs.get`. */
interface RunGet {
  run: { status: string; receiptId: string | null };
}

describe("unsigned receipt metadata on the receipt page", () => {
  it("an edited metadata value is shown only under the unsigned heading, never in the signed document", async () => {
    const { consoleUrl, workspace } = stack();
    const admin = await apiSession(stack().admin);
    const { runId } = await apiMutate<{ runId: string }>(admin, "runs.start", {
      skill: "skills/echo",
      inputs: { message: "metadata" },
    });
    const receiptId = await eventually<string>("the run's receipt", async () => {
      const detail: RunGet = await apiQuery<RunGet>(admin, "runs.get", { runId });
      const id = detail.run.status === "sealed" ? detail.run.receiptId : null;
      return id ?? undefined;
    });
    const file = join(workspace, ".runx", "receipts", `${receiptId.replace(":", "-")}.json`);
    const doc = JSON.parse(readFileSync(file, "utf8")) as { metadata: Record<string, unknown> };
    expect(doc.metadata.exit_code).toBe(0);
    doc.metadata.exit_code = 99;
    writeFileSync(file, JSON.stringify(doc));

    await journey(browser, "unsigned-metadata", async (j) => {
      const page = await j.signIn(stack().viewer);
      await page.goto(`${consoleUrl}/receipts/${encodeURIComponent(receiptId)}`);
      const unsigned = page.getByTestId("unsigned-metadata");
      await unsigned.waitFor();
      expect(await unsigned.getByRole("heading").innerText()).toBe(
        "Unsigned metadata (not verified)",
      );
      expect(await unsigned.innerText()).toContain('"exit_code": 99');
      expect(await unsigned.innerText()).toContain("outside the receipt's digest and signature");
      await page.getByText("Show the signed document as JSON").click();
      const signed = await page.getByTestId("signed-document").innerText();
      expect(signed).toContain(receiptId);
      expect(signed).not.toContain("exit_code");
      expect(signed).not.toContain('"metadata"');
      await j.shot(page, "receipt");
    });
  });
});
