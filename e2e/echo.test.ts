/** Journey: run skills/echo from its skill page and watch it seal. */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkLayouts } from "./harness/a11y.js";
import { launchChromium } from "./harness/chromium.js";
import {
  apiQuery,
  apiSession,
  journey,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

it("runs echo from the skill page and shows it sealed with its output", async () => {
  const { admin } = stack();
  const message = `hello from the console ${Date.now()}`;
  await journey(browser, "echo", async (j) => {
    const page = await j.signIn(admin);
    await page.goto(`${stack().consoleUrl}/skills/echo`);
    await j.shot(page, "skill-page");
    const runId = await startFromSkillPage(page, "echo", { message });
    await waitForRunStatus(page, "sealed");
    const output = await page.getByTestId("run-output").innerText();
    expect(output).toContain(message);
    // echo cannot hand work to an adapter, so the page reports no spawn authority for it.
    expect(await page.getByTestId("spawn-authority").count()).toBe(0);
    await checkLayouts(page, "sealed", j);

    // The page shows what the API recorded, not something of its own.
    const detail = await apiQuery<{ run: { status: string; skill: string } }>(
      await apiSession(admin),
      "runs.get",
      { runId },
    );
    expect(detail.run.status).toBe("sealed");
    expect(detail.run.skill).toContain("echo");
  });
});
