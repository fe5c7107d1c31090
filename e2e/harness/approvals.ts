/** Helpers of the approval-inbox journeys: finding a run's card, deciding with confirmation. */
import type { Locator, Page } from "playwright-core";
import { apiMutate, apiQuery, apiSession, stack } from "./journey.js";

/** Opens the inbox and returns the card of `runId`'s gate. */
export async function inboxCard(page: Page, runId: string): Promise<Locator> {
  await page.goto(`${stack().consoleUrl}/approvals`);
  const card = page.getByRole("article").filter({ hasText: runId });
  await card.waitFor({ timeout: 20_000 });
  return card;
}

/**
 * Gives `reason`, presses Approve or Deny and then the confirmation's "Yes, …" button; returns
 * the confirmation's text as it was shown.
 */
export async function decideWithConfirmation(
  card: Locator,
  decision: "Approve" | "Deny",
  reason: string,
): Promise<string> {
  await card.getByLabel("Reason").fill(reason);
  await card.getByRole("button", { name: decision, exact: true }).click();
  const confirm = card.getByTestId("confirm-decision");
  await confirm.waitFor({ timeout: 10_000 });
  const text = await confirm.innerText();
  await confirm.getByRole("button", { name: `Yes, ${decision.toLowerCase()}` }).click();
  return text;
}

/** The decision log's entry of `runId` once the decision is recorded. */
export async function decisionResult(page: Page, runId: string): Promise<Locator> {
  const entry = page.getByTestId("decision-result").filter({ hasText: runId });
  await entry.waitFor({ timeout: 30_000 });
  return entry;
}

/** Denies every gate still pending on `runIds` (a file's cleanup: nothing it started stays open). */
export async function denyPendingOf(runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  const session = await apiSession(stack().approver);
  const pending = await apiQuery<Array<{ runId: string; gateId: string }>>(
    session,
    "approvals.pending",
  ).catch(() => []);
  for (const gate of pending.filter((p) => runIds.includes(p.runId))) {
    await apiMutate(session, "approvals.decide", {
      runId: gate.runId,
      gateId: gate.gateId,
      decision: "deny",
      reason: "e2e cleanup",
    }).catch(() => {});
  }
}
