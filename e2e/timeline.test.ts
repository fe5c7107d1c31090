/**
 * Journey: a run's timeline. A three-step graph (e2e/fixtures/skills/timeline-release:
 * prepare → approval gate → publish) started in the console by the admin: while the gate waits,
 * the run page lists all three steps, the one not reached yet as pending, and the history says
 * who started the run and what it waits for. The approver approves with a reason in the inbox;
 * the run page then shows every step with start, end, duration and a link to its receipt, and a
 * history naming the approver and the reason on the decision and on the resume. Both states
 * pass axe-core and fit 1280 and 390 px without sideways scrolling.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkLayouts } from "./harness/a11y.js";
import {
  decideWithConfirmation,
  decisionResult,
  denyPendingOf,
  inboxCard,
} from "./harness/approvals.js";
import { launchChromium } from "./harness/chromium.js";
import {
  apiQuery,
  apiSession,
  journey,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";

const SKILL = "timeline-release";
const GATE = "timeline.release";
const REASON = "copy checked against the launch brief";
let browser: Browser;
const started: string[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  // A run this file left waiting is denied, so later journeys' inboxes stay as they expect.
  await denyPendingOf(started);
});

/** The step table's cells of one step, by column. */
async function stepRow(page: Page, stepId: string) {
  const row = page.getByTestId("step-table").locator(`tr[data-step="${stepId}"]`);
  const cell = (col: string) => row.locator(`td[data-col="${col}"]`).innerText();
  const link = row.locator('td[data-col="receipt"] a');
  const receiptLinks = await link.count();
  return {
    status: await row.getAttribute("data-status"),
    name: await row.locator("th").innerText(),
    attempts: await cell("attempts"),
    started: await cell("started"),
    finished: await cell("finished"),
    duration: await cell("duration"),
    receiptHref: receiptLinks > 0 ? await link.getAttribute("href") : null,
    receiptLinks,
  };
}

/** The event history's entries as `kind: text`. */
async function history(page: Page): Promise<string[]> {
  const items = page.getByTestId("event-history").locator("li");
  const out: string[] = [];
  for (let i = 0; i < (await items.count()); i++) {
    const item = items.nth(i);
    out.push(`${await item.getAttribute("data-kind")}: ${(await item.innerText()).trim()}`);
  }
  return out;
}

const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/;

it("lists a paused graph's pending steps, then each step's times and receipts and who resumed it and why", async () => {
  const { admin, approver } = stack();
  await journey(browser, "timeline", async (j) => {
    const page = await j.signIn(admin);
    const runId = await startFromSkillPage(page, SKILL, { message: "launch day" });
    started.push(runId);
    await waitForRunStatus(page, "needs_approval");
    await page.reload();
    await page.getByTestId("step-table").waitFor();

    // Paused at the gate: every planned step is listed, the last one not reached yet.
    const prepare = await stepRow(page, "prepare");
    expect(prepare).toMatchObject({ status: "closed", attempts: "1", receiptLinks: 1 });
    expect(prepare.name).toContain("Prepare the message");
    expect(prepare.started).toMatch(TIME);
    expect(prepare.finished).toMatch(TIME);
    expect(prepare.duration).not.toBe("—");
    expect(await stepRow(page, "release")).toMatchObject({
      status: "waiting",
      started: "—",
      receiptLinks: 0,
    });
    const publish = await stepRow(page, "publish");
    expect(publish).toMatchObject({
      status: "pending",
      attempts: "0",
      started: "—",
      finished: "—",
      duration: "—",
      receiptLinks: 0,
    });
    expect(publish.name).toContain("Publish the message");
    const paused = await history(page);
    expect(paused[0]).toMatch(/^run_started: .*Started by ada in the console/s);
    expect(paused.at(-1)).toMatch(
      /^paused: .*Waiting for approval of gate timeline\.release \(Publish the prepared message\.\)/s,
    );
    await checkLayouts(page, "paused", j);

    // The approver approves in the inbox, with a reason.
    const inbox = await j.signIn(approver);
    const card = await inboxCard(inbox, runId);
    await decideWithConfirmation(card, "Approve", REASON);
    await decisionResult(inbox, runId);

    await page.goto(`${stack().consoleUrl}/runs/${runId}`);
    await waitForRunStatus(page, "sealed");
    await page.getByTestId("step-table").waitFor();
    const receipts: string[] = [];
    for (const stepId of ["prepare", "release", "publish"]) {
      const row = await stepRow(page, stepId);
      expect(row, stepId).toMatchObject({ status: "closed", attempts: "1", receiptLinks: 1 });
      expect(row.started, stepId).toMatch(TIME);
      expect(row.finished, stepId).toMatch(TIME);
      expect(row.duration, stepId).toMatch(/^\d+(\.\d)? (ms|s)$|min/);
      expect(row.receiptHref, stepId).toMatch(/^\/receipts\/sha256%3A[0-9a-f]{64}$/);
      receipts.push(row.receiptHref!);
    }
    expect(new Set(receipts).size).toBe(3);

    const done = await history(page);
    const kinds = done.map((line) => line.split(":")[0]);
    expect(kinds).toEqual([
      "run_started",
      "step_started",
      "step_finished",
      "paused",
      "decision",
      "resumed",
      "step_started",
      "step_finished",
      "step_started",
      "step_finished",
      "sealed",
    ]);
    const decision = done[kinds.indexOf("decision")]!;
    expect(decision).toContain(`grace approved gate ${GATE}`);
    expect(decision).toContain(REASON);
    const resumed = done[kinds.indexOf("resumed")]!;
    expect(resumed).toContain("Resumed by grace in the console");
    expect(resumed).toContain(REASON);
    expect(done.at(-1)).toContain("The run sealed: completed");
    const resumedItem = page.getByTestId("event-history").locator('li[data-kind="resumed"]');
    expect(await resumedItem.getByTestId("event-actor").innerText()).toBe(approver.username);
    expect(await resumedItem.getByTestId("event-reason").innerText()).toBe(REASON);
    await checkLayouts(page, "sealed", j);

    // A step's receipt link opens that receipt.
    await page.getByRole("link", { name: "Receipt of step publish", exact: true }).first().click();
    await page.waitForURL((url) => url.pathname === receipts[2], { timeout: 20_000 });
    await j.shot(page, "publish-receipt");
  });
});

it("names the operator who answered an agent request and the reason they gave", async () => {
  const { approver } = stack();
  await journey(browser, "timeline-answer", async (j) => {
    const page = await j.signIn(approver);
    const runId = await startFromSkillPage(page, "answers-review", {
      subject: `the pricing page (${Date.now()})`,
    });
    await waitForRunStatus(page, "needs_agent");
    expect(await stepRow(page, "review")).toMatchObject({ status: "waiting", receiptLinks: 0 });
    const form = page.getByRole("form", { name: "Answer agent requests" });
    await form.getByLabel("decision").selectOption({ label: "approve" });
    await form.getByLabel("Reason (optional)", { exact: true }).fill("pricing signed off by sales");
    await form.getByRole("button", { name: "Submit answer" }).click();
    await waitForRunStatus(page, "sealed");

    const resumed = page.getByTestId("event-history").locator('li[data-kind="resumed"]');
    expect(await resumed.innerText()).toContain("Resumed by grace in the console, answering");
    expect(await resumed.getByTestId("event-reason").innerText()).toBe(
      "pricing signed off by sales",
    );
    expect(await stepRow(page, "review")).toMatchObject({ status: "closed", receiptLinks: 1 });
    // The API says the same: the answer's operator and reason are the resume's.
    const timeline = await apiQuery<{ events: Array<Record<string, unknown>> }>(
      await apiSession(approver),
      "runs.timeline",
      { runId },
    );
    expect(timeline.events.find((e) => e.kind === "resumed")).toMatchObject({
      via: "console",
      actor: approver.username,
      reason: "pricing signed off by sales",
    });
    await checkLayouts(page, "answered", j);
  });
});
