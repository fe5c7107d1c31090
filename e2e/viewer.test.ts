/** Journey: a viewer sees the pending gate but no Approve/Deny, and the API answers 403. */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import { apiMutate, apiSession, journey, pendingFor, stack } from "./harness/journey.js";
import { mutate, sessionHeaders } from "./harness/trpc.js";

let browser: Browser;
let runId: string | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  // Leave the inbox empty for the other journeys: the approver denies the gate.
  if (runId !== undefined) {
    await apiMutate(await apiSession(stack().approver), "approvals.decide", {
      runId,
      gateId: "gated.release",
      decision: "deny",
      reason: "e2e cleanup after the viewer journey",
    }).catch(() => {});
  }
});

it("shows a viewer the gate without decision buttons; approvals.decide answers 403", async () => {
  const { admin, viewer, consoleUrl, apiUrl } = stack();
  const started = await apiMutate<{ runId: string }>(await apiSession(admin), "runs.start", {
    skill: "skills/gated",
    inputs: { message: `viewer journey ${Date.now()}` },
  });
  runId = started.runId;
  const viewerSession = await apiSession(viewer);
  const pending = await pendingFor(viewerSession, started.runId);

  await journey(browser, "viewer", async (j) => {
    const page = await j.signIn(viewer);
    await page.goto(`${consoleUrl}/approvals`);
    const articles = page.getByRole("article", { name: `Approval ${pending.gateId}` });
    await articles.first().waitFor({ timeout: 20_000 });
    await j.shot(page, "inbox-as-viewer");
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Deny" }).count()).toBe(0);

    // Even with its own valid session and CSRF token, through the console, the API refuses.
    const decide = {
      runId: started.runId,
      gateId: pending.gateId,
      decision: "approve",
      reason: "x",
    };
    const inBrowser = await page.evaluate(async (input) => {
      const csrf = /(?:^|;\s*)runx_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? "";
      const res = await fetch("/trpc/approvals.decide", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": decodeURIComponent(csrf) },
        body: JSON.stringify(input),
      });
      return { status: res.status, body: await res.text() };
    }, decide);
    expect(inBrowser.status).toBe(403);
    expect(inBrowser.body).toContain("FORBIDDEN");

    const direct = await mutate(
      apiUrl,
      "approvals.decide",
      decide,
      sessionHeaders(viewerSession, consoleUrl),
    );
    expect(direct.status).toBe(403);
    expect(JSON.stringify(direct.body)).toContain("FORBIDDEN");
  });
  // The gate is still pending: the refusal changed nothing.
  await pendingFor(viewerSession, started.runId);
});
