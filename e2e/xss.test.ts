/** Journey: a skill output holding a <script> tag renders as text and never runs. */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import { journey, stack, startFromSkillPage, waitForRunStatus } from "./harness/journey.js";

const PAYLOAD = "<script>window.__xss=1</script>";
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function notExecuted(page: Page): Promise<void> {
  expect(
    await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss),
  ).toBeUndefined();
  const injected = await page.evaluate(
    () => [...document.querySelectorAll("script")].filter((s) => s.text.includes("__xss")).length,
  );
  expect(injected).toBe(0);
}

it("shows the xss skill's output as literal text", async () => {
  await journey(browser, "xss", async (j) => {
    const page = await j.signIn(stack().admin);
    await startFromSkillPage(page, "xss", {});
    await waitForRunStatus(page, "sealed");
    const output = page.getByTestId("run-output");
    expect(await output.innerText()).toContain(PAYLOAD);
    await notExecuted(page);
    await j.shot(page, "run-output");

    // The receipt panel shows the same receipt data as text too.
    await page.getByRole("link", { name: "Receipts" }).click();
    const node = page.getByTestId("dag-node").first();
    await node.waitFor({ timeout: 20_000 });
    try {
      await node.click({ timeout: 5_000 });
    } catch {
      await node.focus();
      await page.keyboard.press("Enter");
    }
    await page.getByTestId("receipt-panel").waitFor({ timeout: 20_000 });
    await notExecuted(page);
    await j.shot(page, "receipt-panel");
  });
});
