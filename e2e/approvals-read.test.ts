/**
 * Journeys: approvals you can read. A provider.mutate payout (e2e/fixtures/skills/
 * approvals-payment) started in the console by the admin shows its approver every payload
 * field and the amount in dollars, what approving and denying do, who asked and the policy;
 * the approver confirms a decision that names the effect and is then shown the result with a
 * link to the sealed run (completed, or declined for a denial). A gate gone stale (the
 * package changed after the pause) says so and cannot be approved, in the page or through the
 * API; and a lone admin is told how to get a second approver.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  decideWithConfirmation,
  decisionResult,
  inboxCard,
  denyPendingOf,
} from "./harness/approvals.js";
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

const SKILL = "approvals-payment";
let browser: Browser;
/** Runs this file started: whatever is still pending at the end is denied. */
const started: string[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await denyPendingOf(started);
});

interface Preview {
  headline: string;
  fields: Array<{ path: string; label: string; value: string }>;
  amount: { units: number; unit: string; text: string } | null;
}

/** Starts a payout of $12.50 to `recipient` from the skill page as `page`'s operator. */
async function startPayout(page: Page, recipient: string): Promise<string> {
  const runId = await startFromSkillPage(page, SKILL, {
    recipient,
    amount_cents: "1250",
    memo: `June invoice for ${recipient}`,
    invoice: `inv-${recipient}-${Date.now()}`,
  });
  started.push(runId);
  await waitForRunStatus(page, "needs_approval");
  return runId;
}

interface Detail {
  run: { status: string; disposition: string | null };
  result: unknown;
}

it("shows the payout's payload and amount, and follows an approval with confirmation to the sealed run", async () => {
  const { admin, approver } = stack();
  await journey(browser, "approvals-read-approve", async (j) => {
    const initiator = await j.signIn(admin);
    const runId = await startPayout(initiator, "acct_grace_42");

    const session = await apiSession(approver);
    const pending = (await pendingFor(session, runId)) as unknown as { preview: Preview };
    const page = await j.signIn(approver);
    const card = await inboxCard(page, runId);
    const effect = card.getByTestId("effect-preview");
    const effectText = await effect.innerText();
    expect(effectText).toContain("What approving releases: payout.create of $12.50 to payouts");
    expect(await card.getByTestId("preview-amount").innerText()).toBe("$12.50 (1250 usd_cents)");
    // Every field the runtime previewed, under its label, with its value in full.
    expect(pending.preview.fields.map((f) => f.path)).toEqual(["recipient", "memo", "invoice"]);
    for (const field of pending.preview.fields) {
      const value = card.locator(`dd[data-path="${field.path}"]`);
      expect(await value.innerText()).toBe(field.value);
      expect(effectText).toContain(field.label);
    }
    expect(await card.locator('dd[data-path="recipient"]').innerText()).toBe("acct_grace_42");
    expect(effectText).toContain(
      "Approve: runx performs payout.create on payouts at fixture with this payload, for $12.50",
    );
    expect(effectText).toContain("Deny: The run seals declined; nothing is sent to fixture.");
    expect(await card.getByTestId("asked-by").innerText()).toMatch(
      /^Started by ada in the console at \d{4}-\d\d-\d\d /,
    );
    expect(await card.getByTestId("policy").innerText()).toBe(
      "Needs 1 approval from an approver; the operator who started the run may not approve. 0 of 1 so far.",
    );
    await j.shot(page, "card");

    // A reason first; then a confirmation that names the effect and takes the focus, which
    // Escape gives back to the button that opened it.
    const approve = card.getByRole("button", { name: "Approve", exact: true });
    await approve.click();
    expect(await card.getByRole("alert").innerText()).toContain("Give a reason");
    await card.getByLabel("Reason").fill("invoice 42 checked against the contract");
    await approve.click();
    const confirm = card.getByTestId("confirm-decision");
    expect(await confirm.innerText()).toContain("Approve payout.create of $12.50 to payouts?");
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
    expect(await focused()).toBe("confirm-decision");
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "detached" });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Approve");
    // The keyboard alone: Enter opens the confirmation, Tab reaches "Yes, approve".
    await page.keyboard.press("Enter");
    await confirm.waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Yes, approve");
    await j.shot(page, "confirm");
    await page.keyboard.press("Enter");

    const result = await decisionResult(page, runId);
    expect(await result.innerText()).toContain(
      "Approved (1 of 1). The run resumed and sealed: completed.",
    );
    // The decided card leaves the inbox; its result and the link to the run stay.
    await eventually("the decided card to leave the inbox", async () =>
      (await page.getByRole("article").filter({ hasText: runId }).count()) === 0 ? true : undefined,
    );
    await j.shot(page, "decided");
    await result.getByRole("link", { name: `Open run ${runId}` }).click();
    await page.waitForURL((url) => url.pathname === `/runs/${runId}`, { timeout: 20_000 });
    await waitForRunStatus(page, "sealed");
    await j.shot(page, "run-sealed");

    const detail = await apiQuery<Detail>(session, "runs.get", { runId });
    expect(detail.run.disposition).toBe("closed");
    // What was paid is what the card showed.
    expect(JSON.stringify(detail.result)).toContain('"recipient":"acct_grace_42"');
  });
});

it("follows a denial with confirmation to the declined run; nothing is paid", async () => {
  const { admin, approver } = stack();
  await journey(browser, "approvals-read-deny", async (j) => {
    const initiator = await j.signIn(admin);
    const runId = await startPayout(initiator, "acct_mallory");
    const page = await j.signIn(approver);
    const card = await inboxCard(page, runId);
    // The inbox at a phone's width: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await j.shot(page, "card-390px");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await page.setViewportSize({ width: 1280, height: 900 });
    const shown = await decideWithConfirmation(card, "Deny", "unknown recipient");
    expect(shown).toContain("Deny payout.create of $12.50 to payouts?");
    const result = await decisionResult(page, runId);
    expect(await result.innerText()).toContain("Denied. The run resumed and sealed: declined.");
    await j.shot(page, "decided");
    await result.getByRole("link", { name: `Open run ${runId}` }).click();
    await page.waitForURL((url) => url.pathname === `/runs/${runId}`, { timeout: 20_000 });
    await waitForRunStatus(page, "sealed");
    await j.shot(page, "run-declined");
    const detail = await apiQuery<Detail>(await apiSession(approver), "runs.get", { runId });
    expect(detail.run.disposition).toBe("declined");
    expect(detail.result).toBeNull();
  });
});

it("refuses a stale approval in the page and through the API", async () => {
  const { admin, approver } = stack();
  const profile = join(stack().workspace, "skills", SKILL, "X.yaml");
  const original = readFileSync(profile, "utf8");
  await journey(browser, "approvals-read-stale", async (j) => {
    const initiator = await j.signIn(admin);
    const runId = await startPayout(initiator, "acct_stale");
    const session = await apiSession(approver);
    const { gateId } = await pendingFor(session, runId);
    try {
      // The package changes after the pause: its digest no longer matches the gate's.
      appendFileSync(profile, "# edited after the run paused\n");
      await eventually("the gate to be reported stale", async () =>
        (await pendingFor(session, runId)).stale ? true : undefined,
      );
      const page = await j.signIn(approver);
      const card = await inboxCard(page, runId);
      expect(await card.getByText("stale", { exact: true }).count()).toBe(1);
      expect(await card.getByTestId("stale-explanation").innerText()).toMatch(
        /^This approval is stale and cannot be approved: the package changed/,
      );
      expect(await card.getByRole("button", { name: "Approve", exact: true }).isDisabled()).toBe(
        true,
      );
      expect(await card.getByTestId("approve-blocked").innerText()).toContain(
        "Approving is not possible: this approval is stale",
      );
      await j.shot(page, "stale-card");
      await expect(
        apiMutate(session, "approvals.decide", {
          runId,
          gateId,
          decision: "approve",
          reason: "approve it anyway",
        }),
      ).rejects.toThrow(/HTTP 409.*APPROVAL_STALE/);
      const detail = await apiQuery<Detail>(session, "runs.get", { runId });
      expect(detail.run.status).toBe("needs_approval");
    } finally {
      writeFileSync(profile, original);
    }
  });
});

it("tells a lone admin how to get a second approver", async () => {
  const { admin, approver } = stack();
  await journey(browser, "approvals-read-lone-admin", async (j) => {
    const adminSession = await apiSession(admin);
    await apiMutate(adminSession, "auth.setOperatorDisabled", {
      username: approver.username,
      disabled: true,
    });
    try {
      const page = await j.signIn(admin);
      const runId = await startPayout(page, "acct_alone");
      const card = await inboxCard(page, runId);
      const hint = card.getByTestId("lone-approver");
      expect(await hint.innerText()).toContain("No other operator can approve this gate.");
      expect(await hint.innerText()).toContain("runx operator add <name> --role approver");
      expect(await hint.getByRole("link", { name: "Operators" }).getAttribute("href")).toBe(
        "/operators",
      );
      await j.shot(page, "lone-admin");
    } finally {
      await apiMutate(adminSession, "auth.setOperatorDisabled", {
        username: approver.username,
        disabled: false,
      });
    }
  });
});
