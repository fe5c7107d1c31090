/**
 * Journey: an agent answer that cannot break a run. skills/answers-review pauses needs_agent on
 * its graph step `review` (declared outputs: a required enum `decision`, an optional `note`).
 * The run page shows what the agent is asked in readable form and a form generated from those
 * outputs. The raw `{}` in the advanced mode is refused with the field named — by the browser
 * and by the API — and the run stays paused (also after a reload); the generated form then
 * seals it completed.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeViolations, seriousViolations } from "./harness/a11y.js";
import { launchChromium } from "./harness/chromium.js";
import {
  apiQuery,
  apiSession,
  journey,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";
import { mutate, sessionHeaders } from "./harness/trpc.js";

const REQUEST = "agent_task.review-change.output";
const REFUSAL = 'answer for review: field "decision" is required (one of: approve, revise, reject)';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Detail {
  run: { status: string; disposition: string | null; receiptId: string | null };
  result: unknown;
  receipts: unknown[];
  pendingRequests: Array<{ id: string }>;
}

it("refuses the raw {} with the field named, keeps the run paused, then seals the generated form's answer", async () => {
  const { approver } = stack();
  const subject = `the login page (${Date.now()})`;
  await journey(browser, "answers", async (j) => {
    const page = await j.signIn(approver);
    const session = await apiSession(approver);
    const runId = await startFromSkillPage(page, "answers-review", { subject });
    await waitForRunStatus(page, "needs_agent");

    // What the agent is asked, readable; the raw envelope only in a disclosure.
    const asked = page.getByTestId("agent-request");
    await expect(asked.innerText()).resolves.toContain(
      "Read the change named in the inputs and decide whether it ships.",
    );
    await expect(asked.innerText()).resolves.toContain("revise when it needs more work first");
    await expect(asked.innerText()).resolves.toContain(subject);
    const raw = asked.getByText("Raw request");
    await expect(raw.isVisible()).resolves.toBe(true);
    await expect(asked.locator("details").getAttribute("open")).resolves.toBeNull();
    const form = page.getByRole("form", { name: "Answer agent requests" });
    await expect(form.getByLabel("decision").evaluate((el) => el.tagName)).resolves.toBe("SELECT");
    await j.shot(page, "paused");
    const paused = await seriousViolations(page);
    expect(paused, describeViolations("the paused run page", paused)).toEqual([]);
    const before = await apiQuery<Detail>(session, "runs.get", { runId });

    // Advanced mode: the raw JSON starts as {} for the request and is refused as it is.
    await form.getByRole("button", { name: "Raw JSON (advanced)" }).click();
    const json = form.getByLabel("Answer JSON");
    expect(JSON.parse(await json.inputValue())).toEqual({ [REQUEST]: {} });
    await form.getByRole("button", { name: "Submit answer" }).click();
    const alert = form.getByRole("alert");
    await expect(alert.innerText()).resolves.toBe(REFUSAL);
    await expect(json.getAttribute("aria-invalid")).resolves.toBe("true");
    const described = (await json.getAttribute("aria-describedby")) ?? "";
    expect(described.split(" ")).toContain(await alert.getAttribute("id"));
    await expect(json.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await j.shot(page, "raw-refused");
    const refusedPage = await seriousViolations(page);
    expect(refusedPage, describeViolations("the refused raw answer", refusedPage)).toEqual([]);

    // The API applies the same rule to the same answer: 400, the field named, nothing queued.
    const refused = await mutate(
      stack().apiUrl,
      "runs.answer",
      { runId, answers: { [REQUEST]: {} } },
      sessionHeaders(session, stack().consoleUrl),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: { message: REFUSAL, data: { runtimeCode: "ANSWERS_INVALID", field: "decision" } },
    });
    expect(await apiQuery<Detail>(session, "runs.get", { runId })).toEqual(before);

    // Still paused after a reload: same status, same request, the form again.
    await page.reload();
    await waitForRunStatus(page, "needs_agent");
    await expect(page.getByTestId("agent-request").isVisible()).resolves.toBe(true);
    await j.shot(page, "still-paused");

    // On a 390 px screen the request and its form fit their section.
    await page.setViewportSize({ width: 390, height: 844 });
    const section = page.locator("section.agent-requests");
    const widths = await section.evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(widths[0]).toBeLessThanOrEqual(widths[1]!);
    await j.shot(page, "paused-390");
    await page.setViewportSize({ width: 1280, height: 900 });

    // The generated form: an empty submit names and focuses the required field.
    const decision = form.getByLabel("decision");
    await form.getByRole("button", { name: "Submit answer" }).click();
    await expect(form.getByRole("alert").innerText()).resolves.toBe(REFUSAL);
    await expect(decision.getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(decision.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await j.shot(page, "form-refused");
    const formRefused = await seriousViolations(page);
    expect(formRefused, describeViolations("the refused form", formRefused)).toEqual([]);

    await decision.selectOption({ label: "approve" });
    await form.getByLabel("note").fill("ships after the review");
    await expect(decision.getAttribute("aria-invalid")).resolves.toBeNull();
    await j.shot(page, "form-filled");
    await form.getByRole("button", { name: "Submit answer" }).click();
    await waitForRunStatus(page, "sealed");
    await expect(page.getByTestId("run-output").innerText()).resolves.toContain("approve");
    await j.shot(page, "sealed");

    const sealed = await apiQuery<Detail>(session, "runs.get", { runId });
    expect(sealed.run).toMatchObject({ status: "sealed", disposition: "closed" });
    expect(sealed.result).toEqual({ decision: "approve", note: "ships after the review" });
  });
});
