/**
 * Journeys: the admin adds an approver on /operators (a refusal first, in plain words with its
 * code folded away), the new approver signs in in their own browser and approves the admin's
 * gated run; the admin then changes their role (effective on their next page) and disables
 * them with the keyboard, and cannot demote the last admin. Non-admins get an "admins only"
 * page. And signing in again after the API restarts, with the browser's old cookies: a
 * journey-local API and console (harness/operators.ts), restarted with the same session
 * secret (still signed in), with another install's CSRF cookie, and without a secret.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "./harness/chromium.js";
import type { E2eUser } from "./harness/context.js";
import {
  apiMutate,
  apiQuery,
  apiSession,
  journey,
  pendingFor,
  stack,
  startFromSkillPage,
  waitForRunStatus,
  whoami,
} from "./harness/journey.js";
import { localStack, sessionSecret } from "./harness/operators.js";
import type { LocalStack } from "./harness/operators.js";

const GATE = "gated.release";
let browser: Browser;
const started: string[] = [];
/** Approvers this file adds: disabled afterwards, so other journeys' lone-admin case holds. */
const added: string[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  const adminSession = await apiSession(stack().admin);
  for (const username of added) {
    await apiMutate(adminSession, "auth.setOperatorDisabled", { username, disabled: true }).catch(
      () => {},
    );
  }
  // A journey that failed midway leaves no gate pending for the other files.
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

/** The row of `username` on /operators. */
const row = (page: Page, username: string) => page.getByTestId(`operator-${username}`);

/** Waits for the operators page's outcome line to contain `text`. */
async function outcome(page: Page, text: string): Promise<string> {
  const status = page.getByTestId("operators-outcome").filter({ hasText: text });
  await status.waitFor({ timeout: 20_000 });
  return status.innerText();
}

it("an admin adds an approver in the console, who signs in and approves the admin's gated run", async () => {
  const { admin, consoleUrl, viewer } = stack();
  const username = `appr-${Date.now().toString(36)}`;
  added.push(username);
  await journey(browser, "operators", async (j) => {
    const page = await j.signIn(admin);
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Operators", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/operators", { timeout: 20_000 });
    await row(page, admin.username).waitFor();
    await j.shot(page, "operators");

    // A username the contract refuses: one plain sentence, the code folded in Details.
    const form = page.getByRole("form", { name: "Add an operator" });
    await form.getByLabel("Username").fill("not valid!");
    await form.getByLabel("Approver").check();
    await form.getByRole("button", { name: "Generate a password" }).click();
    await form.getByRole("button", { name: "Add operator" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "username may use only" });
    await refusal.waitFor({ timeout: 20_000 });
    const words = await refusal.locator("p").first().innerText();
    expect(words).toBe(
      "username may use only letters, digits, '.', '_' and '-', and must start with a letter or digit",
    );
    const details = refusal.locator("details");
    expect(await details.getAttribute("open")).toBeNull();
    expect(await refusal.getByText("INPUT_INVALID").isVisible()).toBe(false);
    await details.locator("summary").click();
    expect(await refusal.getByText("INPUT_INVALID").isVisible()).toBe(true);
    await j.shot(page, "refused-in-words");

    // The approver, with a generated password shown once.
    await form.getByLabel("Username").fill(username);
    await form.getByRole("button", { name: "Generate a password" }).click();
    await form.getByRole("button", { name: "Add operator" }).click();
    const added = await outcome(page, `Added ${username} as approver`);
    const password = await page.locator(".operators-outcome code.secret").innerText();
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(added).toContain("shown once");
    await row(page, username).filter({ hasText: "Not recorded" }).waitFor({ timeout: 20_000 });
    expect(
      await row(page, username).getByLabel(`Role of ${username}`, { exact: true }).inputValue(),
    ).toBe("approver");
    await j.shot(page, "approver-added");

    // The admin starts a gated run; the new approver, in their own browser, approves it.
    const message = `approved by a console-made approver ${Date.now()}`;
    const runId = await startFromSkillPage(page, "gated", { message });
    started.push(runId);
    await waitForRunStatus(page, "needs_approval");
    const approver: E2eUser = { username, password, role: "approver" };
    const theirs = await j.signIn(approver);
    await pendingFor(await apiSession(approver), runId);
    await theirs.goto(`${consoleUrl}/approvals`);
    const articles = theirs.getByRole("article", { name: `Approval ${GATE}` });
    await articles.first().waitFor({ timeout: 20_000 });
    const article = articles.filter({ hasText: runId });
    await article.getByLabel("Reason").fill("checked by the new approver");
    await j.shot(theirs, "approver-inbox");
    await article.getByRole("button", { name: "Approve" }).click();
    // The card asks to confirm the effect it names before the decision is sent.
    await article.getByRole("button", { name: "Yes, approve" }).click();
    await waitForRunStatus(page, "sealed", 30_000);
    started.splice(started.indexOf(runId), 1);
    const detail = await apiQuery<{ decisions: Array<{ username: string; decision: string }> }>(
      await apiSession(admin),
      "runs.get",
      { runId },
    );
    expect(detail.decisions).toEqual([expect.objectContaining({ username, decision: "approve" })]);
    await j.shot(page, "run-sealed");

    // Not an admin: /operators says who may, and the nav has no link to it.
    await theirs.goto(`${consoleUrl}/operators`);
    await theirs.getByTestId("admins-only").waitFor({ timeout: 20_000 });
    expect(
      await theirs.getByRole("navigation", { name: "Main" }).getByText("Operators").count(),
    ).toBe(0);
    await j.shot(theirs, "admins-only");

    // The sign-in is recorded; a role change applies on the approver's next page.
    await page.goto(`${consoleUrl}/operators`);
    expect(await row(page, username).innerText()).not.toContain("Not recorded");
    const roleForm = row(page, username).getByRole("form", {
      name: `Change the role of ${username}`,
    });
    await roleForm.getByLabel(`Role of ${username}`, { exact: true }).selectOption("viewer");
    await roleForm.getByRole("button", { name: `Change role of ${username}` }).click();
    await outcome(page, `${username} is now viewer`);
    await theirs.goto(`${consoleUrl}/approvals`);
    await whoami(theirs, { username, password, role: "viewer" });

    // Disabling, with the keyboard only: the confirmation takes the focus, Enter confirms.
    await row(page, username)
      .getByRole("button", { name: `Disable ${username}` })
      .focus();
    await page.keyboard.press("Enter");
    const confirm = row(page, username).getByRole("button", { name: `Disable ${username}` });
    await confirm.waitFor();
    await j.shot(page, "confirm-disable");
    expect(await confirm.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await outcome(page, `${username} is disabled`);
    await row(page, username).getByText("Disabled", { exact: true }).waitFor();
    await j.shot(page, "disabled");
    // Their session ended with it: the next page sends them to sign in.
    await theirs.goto(`${consoleUrl}/runs`);
    await theirs.waitForURL((url) => url.pathname === "/login", { timeout: 20_000 });

    // The last enabled admin keeps the role: refused in words, the code in Details.
    const own = row(page, admin.username).getByRole("form", {
      name: `Change the role of ${admin.username}`,
    });
    await own.getByLabel(`Role of ${admin.username}`, { exact: true }).selectOption("approver");
    await own.getByRole("button", { name: `Change role of ${admin.username}` }).click();
    const last = page.getByRole("alert").filter({ hasText: "last enabled admin" });
    await last.waitFor({ timeout: 20_000 });
    expect(await last.locator("p").first().innerText()).toBe(
      `${admin.username} is the last enabled admin and keeps the admin role; add or enable another admin first`,
    );
    await last.locator("summary").click();
    await last.getByText("LAST_ADMIN").waitFor();
    await j.shot(page, "last-admin");

    // The viewer of the run gets the same "admins only" page.
    const viewerPage = await j.signIn(viewer);
    await viewerPage.goto(`${consoleUrl}/operators`);
    await viewerPage.getByTestId("admins-only").waitFor({ timeout: 20_000 });
  });
});

/**
 * Signs in on `consoleUrl`'s login page (already open or opened here) and waits to leave it:
 * the header may say who is signed in before the form is sent (an old session still open).
 */
async function signInAt(page: Page, consoleUrl: string, user: E2eUser, open = true) {
  if (open) await page.goto(`${consoleUrl}/login`);
  await page.getByLabel("Username").fill(user.username);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname !== "/login", { timeout: 20_000 });
  await whoami(page, user);
}

const sessionCookie = async (context: BrowserContext) =>
  (await context.cookies()).find((c) => c.name === "runx_session")?.value;

it("signs in again after the API restarts, with the browser's old cookies", async () => {
  const secret = sessionSecret();
  let local: LocalStack | undefined;
  try {
    local = await localStack("restart", secret);
    const { consoleUrl, admin } = local;
    await journey(browser, "restart-sign-in", async (j) => {
      const page = await j.anonymous();
      const context = page.context();
      await signInAt(page, consoleUrl, admin);
      await j.shot(page, "signed-in");

      // The same RUNX_API_SESSION_SECRET: the session outlives the restart.
      await local!.restartApi(secret);
      await page.goto(`${consoleUrl}/runs`);
      await whoami(page, admin);
      await j.shot(page, "after-restart-same-secret");

      // Another install's CSRF cookie beside a live session: signing in must still work
      // (it was refused 403 "missing or wrong CSRF token", shown as "Unable to transform
      // response from server").
      await context.addCookies([
        { name: "runx_csrf", value: "another-install-token", url: consoleUrl },
      ]);
      await signInAt(page, consoleUrl, admin);
      expect(
        (await context.cookies()).filter((c) => c.name === "runx_csrf").map((c) => c.value),
      ).not.toContain("another-install-token");
      await j.shot(page, "signed-in-over-foreign-csrf");

      // No secret (a fresh key per start): the old cookies open nothing any more.
      const before = await sessionCookie(context);
      expect(before).toBeDefined();
      await local!.restartApi(undefined);
      await page.goto(`${consoleUrl}/runs`);
      await page.waitForURL((url) => url.pathname === "/login", { timeout: 20_000 });
      expect(new URL(page.url()).searchParams.get("next")).toBe("/runs");
      await page
        .getByRole("status")
        .filter({ hasText: "Your session ended; sign in again." })
        .waitFor({ timeout: 20_000 });
      // The API expired them (one call from the sign-in page).
      const deadline = Date.now() + 10_000;
      while ((await sessionCookie(context)) !== undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await sessionCookie(context)).toBeUndefined();
      expect(await page.getByText("Unable to transform").count()).toBe(0);
      await j.shot(page, "session-ended");
      await signInAt(page, consoleUrl, admin, false);
      await page.waitForURL((url) => url.pathname === "/runs", { timeout: 20_000 });
      expect(await sessionCookie(context)).not.toBe(before);
      await j.shot(page, "signed-in-again");
    });
  } finally {
    await local?.stop();
  }
});
