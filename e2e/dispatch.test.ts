/**
 * Journeys of the adapter dispatch boundary (issue 8) on the run page, with the `dispatch`
 * test skill (e2e/fixtures/skills/dispatch) and the shipped fake-local adapter, trusted in the
 * scratch workspace with `runx adapter trust fake-local` as an operator would:
 *
 * 1. started from the console (which grants no spawn authority) the run records a `dry_run`
 *    attempt; the run page lists it — adapter, lane, status, failure code, times — with a
 *    link to its signed receipt and that receipt's verification;
 * 2. a spawning dispatch started from the CLI (`runx resume … --allow-spawn` after its
 *    approval) shows as in flight; a viewer sees no "Cancel dispatch", the approver cancels
 *    it with a confirmation, and both pages show the `cancelled` attempt without a reload.
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT } from "../scripts/console-services.mjs";
import { launchChromium } from "./harness/chromium.js";
import {
  apiQuery,
  apiSession,
  eventually,
  journey,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";

const RUNX = join(ROOT, "packages", "runtime", "bin", "runx.cjs");

/** The CLI's environment in the journeys' workspace (fixture modes on for fake-local). */
function cliEnv(): NodeJS.ProcessEnv {
  const ws = stack().workspace;
  return {
    PATH: process.env.PATH,
    HOME: join(ws, "home"),
    LANG: process.env.LANG ?? "C.UTF-8",
    RUNX_CWD: ws,
    RUNX_HOME: join(ws, "home", ".runx"),
    RUNX_ADAPTER_FIXTURE_MODES: "1",
  };
}

/** Runs the CLI to completion; returns its exit status and stdout. */
function runx(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [RUNX, ...args], {
    cwd: stack().workspace,
    env: cliEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface AttemptView {
  receipt_id: string;
  verified: boolean;
  lane: string | null;
  receipt: { status: string; failed_check: string | null };
  dispatch: { status: string; adapter_id: string; failure: { code: string } | null };
}

let browser: Browser;
const children: ChildProcess[] = [];
beforeAll(async () => {
  browser = await launchChromium();
  const adapters = join(stack().workspace, "adapters");
  if (!existsSync(adapters)) {
    cpSync(join(ROOT, "packages", "runtime", "fixtures", "adapters"), adapters, {
      recursive: true,
    });
  }
  const trusted = runx(["adapter", "trust", "fake-local"]);
  if (trusted.status !== 0) throw new Error(`runx adapter trust failed: ${trusted.stderr}`);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await browser?.close();
});

const INPUTS = {
  objective: "Summarize the README",
  acceptance_criteria: '["a summary exists"]',
  verification: '["test -f evidence.txt"]',
};

function attemptsRegion(page: Page) {
  return page.getByRole("region", { name: "Dispatch attempts" });
}

it("starts the dispatch skill from the console and shows its attempt with the receipt link", async () => {
  const { approver } = stack();
  await journey(browser, "dispatch", async (j) => {
    const page = await j.signIn(approver);
    const runId = await startFromSkillPage(page, "dispatch", INPUTS);
    await waitForRunStatus(page, "sealed");
    const region = attemptsRegion(page);
    await region.waitFor();
    const rows = region.getByTestId("dispatch-attempt");
    await expect.poll(() => rows.count()).toBe(1);
    const row = rows.first();
    const cells = (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim());
    expect(cells.slice(0, 5)).toEqual([
      "dispatch#1",
      "fake-local",
      "plain-agent",
      "dry_run",
      "spawn_authority_missing",
    ]);
    // The harness signs with a real Ed25519 key, so the attempt's receipt verifies.
    expect((await row.getByTestId("dispatch-verification").innerText()).trim()).toBe("verified");
    // Nothing is in flight: no cancel button.
    expect(await page.getByRole("button", { name: "Cancel dispatch" }).count()).toBe(0);
    await j.shot(page, "dry-run-attempt");

    // The page shows what the API recorded: the same receipt, checked the same way.
    const state = await apiQuery<{ attempts: AttemptView[]; running: unknown[] }>(
      await apiSession(approver),
      "adapters.attempts",
      { runId },
    );
    expect(state.running).toEqual([]);
    const [attempt] = state.attempts;
    expect(attempt).toMatchObject({
      verified: true,
      lane: "plain-agent",
      receipt: { status: "verified" },
      dispatch: { status: "dry_run", adapter_id: "fake-local" },
    });
    const link = row.getByRole("link", { name: `Dispatch receipt ${attempt!.receipt_id}` });
    expect(await link.getAttribute("href")).toBe(
      `/receipts/${encodeURIComponent(attempt!.receipt_id)}`,
    );

    await link.click();
    await page.waitForURL((url) => url.pathname.startsWith("/receipts/"));
    await page.getByRole("heading", { name: "Receipt" }).waitFor();
    const verification = page.locator("p", { hasText: "Verification:" }).locator(".badge");
    expect((await verification.innerText()).trim()).toBe("verified");
    const documentText = await page.locator("pre.json").innerText();
    expect(documentText).toContain("agent_adapter_dispatch");
    expect(documentText).toContain(attempt!.receipt_id);
    await j.shot(page, "dispatch-receipt");
  });
});

it("cancels a running dispatch from the run page; a viewer cannot", async () => {
  const { approver, viewer, workspace } = stack();
  // The CLI starts the reviewed runner with --allow-spawn (spawn authority is checked before
  // approval, so it pauses for its approval), then resumes it with --allow-spawn; fake-local
  // sleeps until it is cancelled (its timeout is 20 s).
  writeFileSync(
    join(workspace, "dispatch-sleep.json"),
    JSON.stringify({
      objective: "Wait to be cancelled",
      acceptance_criteria: ["cancelled from the console"],
      verification: ["none"],
      fixture_mode: "sleep",
    }),
  );
  const paused = runx([
    "skill",
    "skills/dispatch",
    "reviewed",
    "--inputs",
    "dispatch-sleep.json",
    "--allow-spawn",
    "--json",
  ]);
  expect(paused.status, paused.stderr).toBe(2);
  const runId = (JSON.parse(paused.stdout) as { run_id: string }).run_id;
  writeFileSync(
    join(workspace, "dispatch-approve.json"),
    JSON.stringify({ approvals: { "adapter.reviewed.approval": true } }),
  );

  await journey(browser, "dispatch-cancel", async (j) => {
    const watcher = await j.signIn(viewer);
    const operator = await j.signIn(approver);
    const runUrl = `${stack().consoleUrl}/runs/${encodeURIComponent(runId)}`;

    const resumed = spawn(
      process.execPath,
      [RUNX, "resume", runId, "dispatch-approve.json", "--allow-spawn", "--json"],
      { cwd: workspace, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(resumed);
    const exited = new Promise<number | null>((resolve) => resumed.on("exit", resolve));
    const session = await apiSession(viewer);
    await eventually("the dispatch in flight", async () => {
      const state = await apiQuery<{ running: unknown[] }>(session, "adapters.attempts", {
        runId,
      });
      return state.running.length > 0 ? true : undefined;
    });

    await watcher.goto(runUrl);
    await waitForRunStatus(watcher, "running");
    await attemptsRegion(watcher).getByTestId("dispatch-running").waitFor();
    expect(await watcher.getByRole("button", { name: "Cancel dispatch" }).count()).toBe(0);
    await attemptsRegion(watcher).getByText("An approver or admin can cancel it.").waitFor();
    await j.shot(watcher, "viewer-in-flight");

    await operator.goto(runUrl);
    await waitForRunStatus(operator, "running");
    await attemptsRegion(operator).getByTestId("dispatch-running").waitFor();
    await operator.getByRole("button", { name: "Cancel dispatch" }).click();
    const confirm = operator.getByRole("group", { name: "Confirm cancellation" });
    await confirm.waitFor();
    await j.shot(operator, "confirm-cancel");
    await confirm.getByRole("button", { name: "Confirm cancel" }).click();
    await operator.getByRole("status").filter({ hasText: "Cancellation requested" }).waitFor();

    // Both pages settle live: the attempt is recorded as cancelled, nothing is in flight.
    for (const page of [operator, watcher]) {
      await waitForRunStatus(page, "sealed");
      const row = attemptsRegion(page).getByTestId("dispatch-attempt");
      await row.filter({ hasText: "cancelled" }).waitFor({ timeout: 15_000 });
      const cells = (await row.first().getByRole("cell").allInnerTexts()).map((t) => t.trim());
      expect(cells.slice(0, 5)).toEqual([
        "reviewed#1",
        "fake-local",
        "plain-agent",
        "cancelled",
        "cancelled",
      ]);
      // The CLI signed with the local development signer: its receipt is unverified, not invalid.
      expect((await row.first().getByTestId("dispatch-verification").innerText()).trim()).toBe(
        "unverified",
      );
      expect(await attemptsRegion(page).getByTestId("dispatch-running").count()).toBe(0);
    }
    await j.shot(operator, "cancelled");
    expect(await exited).toBe(1);
  });
});
