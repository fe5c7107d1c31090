/**
 * Journey: every console page at a phone's width (390 px) and at a desktop's, checked with
 * axe-core in the page (no serious or critical violation) and for horizontal overflow (the
 * document is never wider than the viewport); and the main actions done with the keyboard
 * alone (sign in, start a run).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeViolations, horizontalOverflow, seriousViolations } from "./harness/a11y.js";
import { decisionResult, inboxCard } from "./harness/approvals.js";
import { launchChromium } from "./harness/chromium.js";
import {
  apiMutate,
  apiQuery,
  apiSession,
  eventually,
  journey,
  stack,
  whoami,
} from "./harness/journey.js";
import type { Journey } from "./harness/journey.js";

let browser: Browser;
/** The gated run this file pauses: denied afterwards so no other journey finds it pending. */
let pausedRun: string | null = null;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  if (pausedRun === null) return;
  await apiMutate(await apiSession(stack().approver), "approvals.decide", {
    runId: pausedRun,
    gateId: "gated.release",
    decision: "deny",
    reason: "a11y journey cleanup",
  }).catch(() => {});
});

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** Checks the page at both widths; returns the problems found (empty when none). */
async function check(j: Journey, page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  for (const [label, size] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    // Layout settles after a resize (client components may re-measure).
    await page.waitForTimeout(100);
    const violations = await seriousViolations(page);
    if (violations.length > 0) problems.push(describeViolations(`${name} (${label})`, violations));
    if (label === "phone") {
      const o = await horizontalOverflow(page);
      if (o.scrollWidth > o.viewport) {
        problems.push(
          `${name} (phone): document is ${o.scrollWidth} px wide in a ${o.viewport} px viewport` +
            (o.culprits.length > 0 ? `; too wide: ${o.culprits.join(", ")}` : ""),
        );
      }
    }
    await j.shot(page, `${name}-${label}`);
  }
  await page.setViewportSize(DESKTOP);
  return problems;
}

/** The pages of a sealed echo run and of a paused gated run, started through the API. */
async function seedRuns(): Promise<{ sealed: string; paused: string; receiptId: string }> {
  const session = await apiSession(stack().admin);
  const echo = await apiMutate<{ runId: string }>(session, "runs.start", {
    skill: "echo",
    inputs: { message: "a11y journey" },
  });
  const gated = await apiMutate<{ runId: string }>(session, "runs.start", {
    skill: "gated",
    inputs: { message: "a11y journey" },
  });
  const sealed = await eventually("the echo run to seal", async () => {
    const d = await apiQuery<{ run: { status: string; receiptId: string | null } }>(
      session,
      "runs.get",
      { runId: echo.runId },
    );
    return d.run.status === "sealed" && d.run.receiptId !== null ? d.run.receiptId : undefined;
  });
  pausedRun = gated.runId;
  await eventually("the gated run to pause", async () => {
    const d = await apiQuery<{ run: { status: string } }>(session, "runs.get", {
      runId: gated.runId,
    });
    return d.run.status === "needs_approval" ? true : undefined;
  });
  return { sealed: echo.runId, paused: gated.runId, receiptId: sealed };
}

it("has no serious accessibility violation and no horizontal overflow on any page", async () => {
  const { admin, consoleUrl } = stack();
  const runs = await seedRuns();
  await journey(browser, "a11y", async (j) => {
    const problems: string[] = [];
    const anonymous = await j.anonymous();
    await anonymous.goto(`${consoleUrl}/login`);
    problems.push(...(await check(j, anonymous, "login")));

    const page = await j.signIn(admin);
    const pages: Array<[string, string]> = [
      ["runs", "/runs"],
      ["run-sealed", `/runs/${runs.sealed}`],
      ["run-paused", `/runs/${runs.paused}`],
      ["dag", `/runs/${runs.sealed}/receipts`],
      ["receipt", `/receipts/${encodeURIComponent(runs.receiptId)}`],
      ["approvals", "/approvals"],
      ["skills", "/skills"],
      ["skill", "/skills/echo"],
      ["operators", "/operators"],
      ["not-found", "/runs/run_does_not_exist"],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${consoleUrl}${path}`);
      await page.locator("main").waitFor();
      problems.push(...(await check(j, page, name)));
    }
    expect(problems, problems.join("\n")).toEqual([]);
  });
});

it("signs in and starts a run with the keyboard alone", async () => {
  const { admin, consoleUrl } = stack();
  await journey(browser, "keyboard", async (j) => {
    const page = await j.anonymous();
    await page.goto(`${consoleUrl}/login`);
    // From the top of the page: Tab reaches the username field, then the password field.
    await tabTo(page, (el) => el.label === "Username");
    await page.keyboard.type(admin.username);
    await page.keyboard.press("Tab");
    await page.keyboard.type(admin.password);
    await page.keyboard.press("Enter");
    await whoami(page, admin);

    await page.goto(`${consoleUrl}/skills/echo`);
    await page.getByRole("form", { name: "Start run" }).waitFor();
    await tabTo(page, (el) => el.label === "message");
    await page.keyboard.type("typed with the keyboard");
    await tabTo(page, (el) => el.tag === "button" && el.text === "Start run");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/runs\/run_/, { timeout: 30_000 });
    await page.getByTestId("run-output").filter({ hasText: "typed with the keyboard" }).waitFor({
      timeout: 30_000,
    });
    await j.shot(page, "started-by-keyboard");
  });
});

it("approves a gate with the keyboard alone: reason, Approve, confirmation", async () => {
  const { admin, approver } = stack();
  const admins = await apiSession(admin);
  const started = await apiMutate<{ runId: string }>(admins, "runs.start", {
    skill: "gated",
    inputs: { message: "approved by keyboard" },
  });
  await eventually("the gated run to pause", async () => {
    const d = await apiQuery<{ run: { status: string } }>(admins, "runs.get", {
      runId: started.runId,
    });
    return d.run.status === "needs_approval" ? true : undefined;
  });
  await journey(browser, "keyboard-approve", async (j) => {
    const page = await j.signIn(approver);
    const card = await inboxCard(page, started.runId);
    // The card's first field takes the focus the way Tab would reach it; from there on only
    // keys: type the reason, Tab to Approve, Enter; the confirmation takes the focus, Tab to
    // "Yes, approve", Enter.
    await card.getByLabel("Reason").focus();
    await page.keyboard.type("read it, approving by keyboard");
    await tabTo(page, (el) => el.tag === "button" && el.text === "Approve");
    await page.keyboard.press("Enter");
    await card.getByTestId("confirm-decision").waitFor({ timeout: 10_000 });
    await tabTo(page, (el) => el.tag === "button" && el.text === "Yes, approve");
    await j.shot(page, "confirm-focused");
    await page.keyboard.press("Enter");
    await decisionResult(page, started.runId);
    await j.shot(page, "approved");
  });
  await eventually("the approved run to seal", async () => {
    const d = await apiQuery<{ run: { status: string } }>(admins, "runs.get", {
      runId: started.runId,
    });
    return d.run.status === "sealed" ? true : undefined;
  });
});

interface Focused {
  tag: string;
  label: string;
  text: string;
}

/** Presses Tab until the focused element matches (at most 40 presses). */
async function tabTo(page: Page, match: (el: Focused) => boolean): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < 40; i += 1) {
    await page.keyboard.press("Tab");
    const el = await page.evaluate<Focused>(`(() => {
      const a = document.activeElement;
      if (!a) return { tag: "", label: "", text: "" };
      const labels = a.labels ? Array.from(a.labels).map((l) => l.textContent.trim()) : [];
      return {
        tag: a.tagName.toLowerCase(),
        label: labels[0] ?? a.getAttribute("aria-label") ?? "",
        text: (a.textContent ?? "").trim(),
      };
    })()`);
    if (match(el)) return;
    seen.push(`${el.tag}[${el.label || el.text.slice(0, 20)}]`);
  }
  throw new Error(`Tab never reached the element; focus went through ${seen.join(" → ")}`);
}
