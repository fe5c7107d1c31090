/**
 * Journey: run outcomes in the console. A gated run denied by the approver is shown as
 * declined and a run whose command exits 3 (fixtures/skills/outcomes-fail) as failed — in the
 * list and on the run page — and the outcome filter finds each; the approver's "Waiting for me"
 * holds the gate the admin's run waits on; a run started with the CLI in another process
 * appears in the open list without a reload, and a status change turns its badge live;
 * Previous and Next page through a skill search with the total shown.
 */
import type { Browser, Page } from "playwright-core";
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
} from "./harness/journey.js";
import type { Session } from "./harness/trpc.js";
import { runRow, runxCli, waitForRowOutcome } from "./harness/outcomes.js";

const GATE = "gated.release";
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface ListPage {
  items: Array<{ id: string; outcome: string; initiator: string | null }>;
  total: number;
  totalCapped: boolean;
}

/** Starts `skill` through the API and waits until its run has left `running`. */
async function started(session: Session, skill: string, inputs: Record<string, string> = {}) {
  const { runId } = await apiMutate<{ runId: string }>(session, "runs.start", { skill, inputs });
  await eventually(`run ${runId} to settle or pause`, async () => {
    const detail = await apiQuery<{ run: { outcome: string } }>(session, "runs.get", { runId });
    return detail.run.outcome === "running" ? undefined : true;
  });
  return runId;
}

async function deny(session: Session, runId: string): Promise<void> {
  await pendingFor(session, runId);
  await apiMutate(session, "approvals.decide", {
    runId,
    gateId: GATE,
    decision: "deny",
    reason: "e2e outcomes: not this one",
  });
}

/** The outcome labels of every row shown. */
async function rowOutcomes(page: Page): Promise<string[]> {
  return (await page.getByTestId("run-outcome").allInnerTexts()).map((t) => t.trim());
}

async function filterBy(page: Page, outcome: string): Promise<void> {
  await page.getByLabel("Outcome").selectOption(outcome);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await page.waitForURL((url) => url.searchParams.get("outcome") === outcome);
}

it("shows declined and failed runs as such, filters, pages and waits for me, and lists a CLI run live", async () => {
  const { admin, approver, consoleUrl } = stack();
  const ada = await apiSession(admin);
  const grace = await apiSession(approver);
  // ada starts both gated runs: grace (not the initiator) denies one; the other waits for her.
  const declined = await started(ada, "skills/gated", { message: "declined" });
  await deny(grace, declined);
  const failed = await started(ada, "skills/outcomes-fail");
  const waiting = await started(ada, "skills/gated", { message: "waiting" });

  await journey(browser, "outcomes", async (j) => {
    const page = await j.signIn(approver);

    // The outcome filter finds the declined run and shows nothing but declined runs.
    await page.goto(`${consoleUrl}/runs`);
    await filterBy(page, "declined");
    await waitForRowOutcome(page, declined, "declined");
    expect(new Set(await rowOutcomes(page))).toEqual(new Set(["declined"]));
    const declinedTotal = (
      await apiQuery<ListPage>(grace, "runs.list", { outcome: "declined", limit: 1 })
    ).total;
    expect((await page.getByTestId("runs-total").innerText()).trim()).toBe(
      `${declinedTotal} ${declinedTotal === 1 ? "run" : "runs"}`,
    );
    expect(await runRow(page, declined).locator("td").nth(3).innerText()).toBe(admin.username);
    await j.shot(page, "filter-declined");

    await filterBy(page, "failed");
    await waitForRowOutcome(page, failed, "failed");
    expect(new Set(await rowOutcomes(page))).toEqual(new Set(["failed"]));
    await j.shot(page, "filter-failed");

    // The run page says failed; the record status beside it is only "sealed", uncoloured.
    await runRow(page, failed).getByRole("link", { name: failed }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/runs/${failed}`));
    expect((await page.getByTestId("run-outcome").innerText()).trim()).toBe("failed");
    expect((await page.getByTestId("run-status").innerText()).trim()).toBe("sealed");
    await j.shot(page, "run-page-failed");
    await page.goto(`${consoleUrl}/runs/${declined}`);
    expect((await page.getByTestId("run-outcome").innerText()).trim()).toBe("declined");
    await j.shot(page, "run-page-declined");

    // Waiting for me: the gate grace may decide, not the runs that are over.
    await page.goto(`${consoleUrl}/runs`);
    await page.getByRole("link", { name: "Waiting for me" }).click();
    await page.waitForURL((url) => url.searchParams.get("view") === "waiting");
    await waitForRowOutcome(page, waiting, "paused for approval");
    expect(await runRow(page, declined).count()).toBe(0);
    expect(await runRow(page, failed).count()).toBe(0);
    await j.shot(page, "waiting-for-me");
    // ada started it, and the default policy excludes the initiator: not waiting for her.
    const adas = await apiQuery<ListPage>(ada, "runs.list", { waitingForMe: true, limit: 500 });
    expect(adas.items.map((r) => r.id)).not.toContain(waiting);

    // Live: a run started by the CLI in another process shows up without a reload.
    await page.goto(`${consoleUrl}/runs?search=outcomes-fail&limit=2`);
    await runRow(page, failed).waitFor();
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: string }).__sameDocument = "not reloaded";
    });
    const cli = runxCli(["skill", "skills/outcomes-fail"]);
    expect(cli.status).toBe(1);
    await waitForRowOutcome(page, cli.envelope.run_id, "failed");
    expect((await runRow(page, cli.envelope.run_id).locator("td").nth(3).innerText()).trim()).toBe(
      "CLI / MCP",
    );
    expect(
      await page.evaluate(() => (window as unknown as { __sameDocument?: string }).__sameDocument),
    ).toBe("not reloaded");
    await j.shot(page, "live-cli-run");

    // Pages: two per page over the journey's runs of outcomes-fail, with the total.
    const third = await started(ada, "skills/outcomes-fail");
    await waitForRowOutcome(page, third, "failed");
    const all = await apiQuery<ListPage>(grace, "runs.list", {
      skillSearch: "outcomes-fail",
      limit: 500,
    });
    expect(all.total).toBeGreaterThanOrEqual(3);
    expect((await page.getByTestId("runs-total").innerText()).trim()).toBe(`${all.total} runs`);
    const firstPage = await page
      .getByTestId("run-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")));
    expect(firstPage).toEqual(all.items.slice(0, 2).map((r) => r.id));
    await page.getByRole("link", { name: "Next →" }).click();
    await page.waitForURL((url) => url.searchParams.has("cursor"));
    await page.getByTestId("run-row").first().waitFor();
    const secondPage = await page
      .getByTestId("run-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")));
    expect(secondPage).toEqual(all.items.slice(2, 4).map((r) => r.id));
    await j.shot(page, "page-2");
    await page.getByRole("link", { name: "← Previous" }).click();
    await page.waitForURL((url) => url.searchParams.has("cursor"));
    await runRow(page, firstPage[0]!).waitFor();
    expect(
      await page
        .getByTestId("run-row")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id"))),
    ).toEqual(firstPage);
    expect(await page.getByRole("link", { name: "← Previous" }).count()).toBe(0);

    // Live status change on the open list: the waiting run's badge turns declined.
    await page.goto(`${consoleUrl}/runs?search=gated`);
    await waitForRowOutcome(page, waiting, "paused for approval");
    await deny(grace, waiting);
    await waitForRowOutcome(page, waiting, "declined");
    await j.shot(page, "live-declined");

    // The badges in the dark theme (contrast is checked in outcomes.css).
    await page.goto(`${consoleUrl}/runs`);
    await page.getByRole("button", { name: "Toggle theme" }).click();
    await j.shot(page, "list-dark");
    await page.getByRole("button", { name: "Toggle theme" }).click();
  });
});
