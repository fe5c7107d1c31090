/**
 * Journeys: an approval-gated run (skills/gated) started by the admin, found in the approver's
 * inbox with what it is bound to, approved with a reason → the run seals and the receipt DAG
 * names the approver; and the deny path. The admin cannot decide a gate of a run it started
 * (default policy: approver ≠ initiator), so the approver is a second operator.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import {
  apiMutate,
  apiQuery,
  apiSession,
  eventually,
  journey,
  pendingFor,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";

const GATE = "gated.release";
let browser: Browser;
/** Runs this file started: a journey that fails midway leaves no gate pending for the next. */
const started: string[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  if (started.length === 0) return;
  const session = await apiSession(stack().approver);
  for (const runId of started) {
    await apiMutate(session, "approvals.decide", {
      runId,
      gateId: GATE,
      decision: "deny",
      reason: "e2e cleanup after a failed journey",
    }).catch(() => {});
  }
});

/** The inbox article of `runId`'s gate. */
async function inboxArticle(page: Page, runId: string): Promise<Locator> {
  await page.goto(`${stack().consoleUrl}/approvals`);
  const articles = page.getByRole("article", { name: `Approval ${GATE}` });
  await articles.first().waitFor({ timeout: 20_000 });
  return (await articles.count()) > 1 ? articles.filter({ hasText: runId }) : articles.first();
}

/** The part of a digest any display shows: `sha256:` and the first 8 hex digits. */
const prefix = (digest: string) => digest.slice(0, "sha256:".length + 8);

/** Waits until the decided article is gone or says "decided". */
async function decided(article: Locator): Promise<void> {
  await eventually("the decided article to leave the inbox", async () => {
    if ((await article.count()) === 0) return true;
    // A short timeout: the article can leave between the count and this read, and innerText
    // would otherwise wait its full default timeout for an element that is gone for good.
    const text = await article.innerText({ timeout: 1000 }).catch(() => "");
    return /decided/i.test(text) ? true : undefined;
  });
}

interface Detail {
  run: { status: string; disposition: string | null };
  result: unknown;
  steps: Array<{ stepId: string; status: string }>;
  decisions: Array<{ username: string; decision: string; reason: string }>;
}

it("approves a gated run from the inbox; the run seals and the DAG names the approver", async () => {
  const { admin, approver } = stack();
  const message = `released ${Date.now()}`;
  const reason = `checked the message (${Date.now()})`;
  await journey(browser, "approve", async (j) => {
    const initiator = await j.signIn(admin);
    const runId = await startFromSkillPage(initiator, "gated", { message });
    started.push(runId);
    await waitForRunStatus(initiator, "needs_approval");
    await j.shot(initiator, "run-waiting");

    const session = await apiSession(approver);
    const pending = await pendingFor(session, runId);
    expect(pending.stale).toBe(false);

    const page = await j.signIn(approver);
    const article = await inboxArticle(page, runId);
    const text = await article.innerText();
    expect(text).toContain(pending.reason);
    expect(text).toContain("Package digest");
    expect(text).toContain("Closure digest");
    expect(text).toContain(prefix(pending.boundPackageDigest));
    expect(text).toContain(prefix(pending.boundExecutionClosureDigest));
    expect(await article.getByText("stale", { exact: true }).count()).toBe(0);
    await j.shot(page, "inbox");

    await article.getByLabel("Reason").fill(reason);
    await article.getByRole("button", { name: "Approve" }).click();
    // The confirmation names the effect before anything is released.
    await article.getByRole("button", { name: "Yes, approve" }).click();
    await decided(article);
    await j.shot(page, "decided");

    // The initiator's run page turns sealed live, without a reload.
    await waitForRunStatus(initiator, "sealed", 30_000);
    expect(await initiator.getByTestId("run-output").innerText()).toContain(message);
    await j.shot(initiator, "run-sealed");

    const detail = await apiQuery<Detail>(session, "runs.get", { runId });
    expect(detail.run.status).toBe("sealed");
    expect(detail.decisions).toEqual([
      expect.objectContaining({ username: approver.username, decision: "approve", reason }),
    ]);

    // The receipt that carries the signed decision, found through the API, shown in the DAG.
    const dag = await apiQuery<{
      nodes: Array<{ id: string; status: string; approvals: Array<{ approver: string }> }>;
    }>(session, "receipts.dag", { runId });
    const signed = dag.nodes.find((n) =>
      n.approvals.some((a) => a.approver.includes(approver.username)),
    );
    expect(signed, "a receipt in the DAG carries the console approval").toBeDefined();

    await initiator.getByRole("link", { name: "Receipts" }).click();
    await initiator.waitForURL((url) => url.pathname === `/runs/${runId}/receipts`, {
      timeout: 20_000,
    });
    const node = initiator.locator(`[data-testid="dag-node"][data-receipt-id="${signed!.id}"]`);
    await node.waitFor({ timeout: 20_000 });
    await j.shot(initiator, "dag");
    try {
      await node.click({ timeout: 5_000 });
    } catch {
      await node.focus();
      await initiator.keyboard.press("Enter");
    }
    const panel = initiator.getByTestId("receipt-panel");
    await panel
      .filter({ hasText: `approved by ${approver.username}` })
      .waitFor({ timeout: 20_000 });
    // The approver's name comes with the DAG; the reason once the receipt itself has loaded.
    await panel.filter({ hasText: reason }).waitFor({ timeout: 20_000 });
    const panelText = await panel.innerText();
    expect(panelText).toContain(reason);
    // The API signs with a real Ed25519 key, so the receipt verifies under that key.
    expect(signed!.status).toBe("verified");
    expect(panelText).toMatch(/(^|[^a-z])verified([^a-z]|$)/);
    expect(panelText).not.toMatch(/unverified|invalid:/);
    await j.shot(initiator, "receipt-panel");
  });
});

it("denies a gated run from the inbox; the run closes declined and the echo never runs", async () => {
  const { admin, approver } = stack();
  const message = `withheld ${Date.now()}`;
  const reason = `not this one (${Date.now()})`;
  await journey(browser, "deny", async (j) => {
    const initiator = await j.signIn(admin);
    const runId = await startFromSkillPage(initiator, "gated", { message });
    started.push(runId);
    await waitForRunStatus(initiator, "needs_approval");

    const session = await apiSession(approver);
    await pendingFor(session, runId);
    const page = await j.signIn(approver);
    const article = await inboxArticle(page, runId);
    await article.getByLabel("Reason").fill(reason);
    await j.shot(page, "inbox");
    await article.getByRole("button", { name: "Deny" }).click();
    await article.getByRole("button", { name: "Yes, deny" }).click();
    await decided(article);
    await j.shot(page, "decided");

    const detail = await eventually("the denied run to settle", async () => {
      const d = await apiQuery<Detail>(session, "runs.get", { runId });
      return d.run.status === "needs_approval" || d.run.status === "running" ? undefined : d;
    });
    // A denial closes the run: sealed with disposition "declined", no result, the echo never ran.
    expect(detail.run.disposition).toBe("declined");
    expect(detail.result).toBeNull();
    expect(detail.steps.some((step) => step.stepId.includes("say"))).toBe(false);
    expect(detail.decisions).toEqual([
      expect.objectContaining({ username: approver.username, decision: "deny", reason }),
    ]);
    // The initiator's page follows live to the same status; no output of the echo step.
    await waitForRunStatus(initiator, detail.run.status, 30_000);
    const output = initiator.getByTestId("run-output");
    if ((await output.count()) > 0) expect(await output.innerText()).not.toContain(message);
    await j.shot(initiator, "run-denied");
    const pending = await apiQuery<Array<{ runId: string }>>(session, "approvals.pending");
    expect(pending.some((p) => p.runId === runId)).toBe(false);
  });
});
