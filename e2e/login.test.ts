/** Journey: deep link while signed out → /login?next=…, a wrong password, sign in, sign out. */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import { journey, stack, whoami } from "./harness/journey.js";

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

it("signs in from a deep link, lands on it, and signs out", async () => {
  const { consoleUrl, admin } = stack();
  await journey(browser, "login", async (j) => {
    const page = await j.anonymous();
    await page.goto(`${consoleUrl}/approvals`);
    await page.waitForURL((url) => url.pathname === "/login", { timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get("next")).toBe("/approvals");
    await j.shot(page, "redirected-to-login");

    await page.getByLabel("Username").fill(admin.username);
    await page.getByLabel("Password").fill(`${admin.password}-wrong`);
    await page.getByRole("button", { name: "Sign in" }).click();
    // Next's route announcer is also role="alert" (empty, visually hidden), so name the message.
    await page
      .getByRole("alert")
      .filter({ hasText: "invalid username or password" })
      .waitFor({ timeout: 20_000 });
    await j.shot(page, "wrong-password");
    expect(new URL(page.url()).pathname).toBe("/login");

    await page.getByLabel("Password").fill(admin.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await whoami(page, admin);
    await page.waitForURL((url) => url.pathname === "/approvals", { timeout: 20_000 });
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const link of ["Runs", "Approvals", "Skills"]) {
      await nav.getByRole("link", { name: link, exact: true }).waitFor();
    }
    await j.shot(page, "signed-in");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.pathname === "/login", { timeout: 20_000 });
    await page.goto(`${consoleUrl}/runs`);
    await page.waitForURL((url) => url.pathname === "/login", { timeout: 20_000 });
    await j.shot(page, "signed-out");
  });
});

it("keeps the sign-in form inert until the page is hydrated (never a native GET with the password)", async () => {
  const { consoleUrl } = stack();
  // Without JavaScript the page stays as server-rendered: what a user sees before hydration.
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(`${consoleUrl}/login`);
    const form = page.locator("form.auth-form");
    expect(await form.getAttribute("method")).toBe("post");
    for (const label of ["Username", "Password"]) {
      expect(await page.getByLabel(label).isDisabled()).toBe(true);
    }
    expect(await page.getByRole("button", { name: "Sign in" }).isDisabled()).toBe(true);
  } finally {
    await context.close();
  }
  // With JavaScript the same controls become usable.
  const live = await browser.newContext();
  try {
    const page = await live.newPage();
    await page.goto(`${consoleUrl}/login`);
    await expect
      .poll(() => page.getByLabel("Password").isEnabled(), { timeout: 20_000 })
      .toBe(true);
  } finally {
    await live.close();
  }
});
