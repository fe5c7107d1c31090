/**
 * Journeys of the adapter dispatch boundary on the run page, with the `dispatch`
 * test skill (e2e/fixtures/skills/dispatch) and the shipped fake-local adapter, trusted in the
 * scratch workspace with `runx adapter trust fake-local` as an operator would:
 *
 * 1. started from the console without "Allow spawn" the run records a `dry_run` attempt; the
 *    run page lists it — adapter, lane, status, failure code, times — with a link to its
 *    signed receipt and that receipt's verification;
 * 2. started with "Allow spawn" on a runner that needs approval, the approval card shows what
 *    the approval binds (packet digest, adapter and digest, requested vs granted authority,
 *    network as declared, credentials by name, limits, workspace, who granted spawn); another
 *    operator approves, the dispatch launches, its receipt names both, and its logs render
 *    redacted; a noisy adapter's log renders truncated;
 * 3. an adapter's question pauses the run `needs_agent`; the run page shows its question id and
 *    answer schema, and the answer builds a new packet whose attempt retries the first;
 * 4. a spawning dispatch started from the CLI (`runx resume … --allow-spawn` after its
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
  dispatch: {
    status: string;
    adapter_id: string;
    failure: { code: string } | null;
    packet_id: string;
    retry_of: string | null;
    spawn_authority: { granted: boolean; source: string | null; principal: string | null };
    approval: { approver: string } | null;
  };
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
  return page.getByRole("region", { name: "Dispatch attempts", exact: true });
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
    // The signed document (the page shows the receipt's unsigned metadata apart).
    await page.getByText("Show the signed document as JSON").click();
    const documentText = await page.getByTestId("signed-document").innerText();
    expect(documentText).toContain("agent_adapter_dispatch");
    expect(documentText).toContain(attempt!.receipt_id);
    await j.shot(page, "dispatch-receipt");
  });
});

it("shows a refused dispatch on the run page with its failure code and verified receipt", async () => {
  const { approver } = stack();
  await journey(browser, "dispatch-refused", async (j) => {
    const page = await j.signIn(approver);
    // No verification: the packet is not executable, refused before anything could launch.
    const runId = await startFromSkillPage(page, "dispatch", { ...INPUTS, verification: "[]" });
    const region = attemptsRegion(page);
    await region.waitFor();
    const rows = region.getByTestId("dispatch-attempt");
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(1);
    const row = rows.first();
    const cells = (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim());
    expect(cells.slice(0, 5)).toEqual([
      "dispatch#1",
      "fake-local",
      "plain-agent",
      "rejected",
      "package_not_executable",
    ]);
    expect((await row.getByTestId("dispatch-verification").innerText()).trim()).toBe("verified");
    expect(await page.getByRole("button", { name: "Cancel dispatch" }).count()).toBe(0);
    await j.shot(page, "refused-attempt");

    const state = await apiQuery<{ attempts: AttemptView[] }>(
      await apiSession(approver),
      "adapters.attempts",
      { runId },
    );
    expect(state.attempts).toHaveLength(1);
    expect(state.attempts[0]).toMatchObject({
      verified: true,
      receipt: { status: "verified" },
      dispatch: { status: "rejected", failure: { code: "package_not_executable" } },
    });
  });
});

/** Starts the dispatch skill from its page with `runner`, `inputs` and "Allow spawn" checked. */
async function startWithSpawn(
  page: Page,
  runner: string,
  inputs: Record<string, string>,
): Promise<string> {
  await page.goto(`${stack().consoleUrl}/skills/dispatch`);
  const form = page.getByRole("form", { name: "Start run" });
  await form.waitFor();
  await form.getByLabel("Runner").selectOption(runner);
  for (const [name, value] of Object.entries(inputs)) {
    await form.getByLabel(name, { exact: true }).fill(value);
  }
  const allow = form.getByLabel("Allow spawn");
  expect(await allow.isChecked()).toBe(false);
  await allow.check();
  await form.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL((url) => /^\/runs\/[^/]+$/.test(url.pathname), { timeout: 30_000 });
  return decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
}

it("grants spawn from the start form; the approval card shows what it binds; logs render redacted and truncated", async () => {
  const { admin, approver, viewer } = stack();
  await journey(browser, "dispatch-approve", async (j) => {
    const starter = await j.signIn(approver);
    const runId = await startWithSpawn(starter, "reviewed", {
      ...INPUTS,
      fixture_mode: "secret_echo",
    });
    await waitForRunStatus(starter, "needs_approval");
    expect((await starter.getByTestId("spawn-authority").innerText()).trim()).toBe(
      `granted by ${approver.username}: adapter dispatches may launch`,
    );

    // Before anyone approves, the card shows everything the approval binds.
    const decider = await j.signIn(admin);
    await decider.goto(`${stack().consoleUrl}/approvals`);
    const card = decider
      .getByRole("article", { name: "Approval adapter.reviewed.approval" })
      .filter({ hasText: runId });
    await card.waitFor({ timeout: 20_000 });
    const [gate] = (
      await apiQuery<Array<{ runId: string; summary: Record<string, unknown> }>>(
        await apiSession(viewer),
        "approvals.pending",
      )
    ).filter((g) => g.runId === runId);
    const facts = await card.locator("dl.facts").innerText();
    for (const expected of [
      "Adapter\nfake-local",
      `Adapter digest\n${String(gate!.summary.definition_digest)}`,
      `Packet digest\n${String(gate!.summary.packet_digest)}`,
      "Authority requested\nhuman_approval_required, read_only",
      "Network\nnone (declared by the adapter; not enforced)",
      "Credentials\nnone",
      "Workspace\nno worktree (runs in its own output directory)",
      `Spawn authority\ngranted by ${approver.username} when starting the run`,
    ]) {
      expect(facts).toContain(expected);
    }
    expect(facts).toMatch(/Authority granted\n.*commit_forbidden.*read_only/);
    expect(facts).toMatch(/Limits\ntimeout 20 s; grace 500 ms; stdout 256 KiB/);
    await j.shot(decider, "approval-card");
    await card.getByLabel("Reason").fill("read only, nothing leaves the workspace");
    await card.getByRole("button", { name: "Approve" }).click();
    await card.getByRole("button", { name: "Yes, approve" }).click();
    // Decided: the card leaves the inbox once the run resumes.
    await eventually("the decided card to leave the inbox", async () =>
      (await card.count()) === 0 ||
      /decided/i.test(await card.innerText({ timeout: 1000 }).catch(() => ""))
        ? true
        : undefined,
    );

    await starter.reload();
    await waitForRunStatus(starter, "sealed");
    const row = attemptsRegion(starter).getByTestId("dispatch-attempt").first();
    const cells = (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim());
    expect(cells.slice(0, 5)).toEqual([
      "reviewed#1",
      "fake-local",
      "plain-agent",
      "completed",
      "—",
    ]);
    expect((await row.getByTestId("dispatch-verification").innerText()).trim()).toBe("verified");
    const [attempt] = (
      await apiQuery<{ attempts: AttemptView[] }>(await apiSession(viewer), "adapters.attempts", {
        runId,
      })
    ).attempts;
    expect(attempt!.dispatch.spawn_authority).toEqual({
      granted: true,
      source: "console",
      principal: `runx:principal:operator:${approver.username}`,
    });
    expect(attempt!.dispatch.approval?.approver).toBe(`runx:principal:operator:${admin.username}`);

    // The adapter printed its working directory and a bearer token: both are redacted.
    const logs = attemptsRegion(starter).getByTestId("dispatch-logs").first();
    await logs.locator("summary").click();
    const stdout = logs.getByTestId("dispatch-log-stdout");
    const text = await stdout.locator("pre").innerText();
    expect(text).toContain("cwd=<workspace>/");
    expect(text).not.toContain(stack().workspace);
    expect(text).not.toContain("abcdefghijklmnop1234");
    await j.shot(starter, "logs-redacted");

    // A noisy adapter's stdout is kept up to its cap and says so.
    const noisy = await startWithSpawn(starter, "dispatch", {
      ...INPUTS,
      fixture_mode: "noisy_stdout:300000",
    });
    await waitForRunStatus(starter, "sealed");
    const noisyLogs = attemptsRegion(starter).getByTestId("dispatch-logs").first();
    await noisyLogs.locator("summary").click();
    const facts2 = await noisyLogs
      .getByTestId("dispatch-log-stdout")
      .locator("p")
      .first()
      .innerText();
    expect(facts2).toContain("truncated by the adapter's output limit");
    expect(facts2).toContain("showing the first 64 KiB");
    expect(facts2).toMatch(
      /^stdout: \d+ B written, 256 KiB kept|^stdout: \d+ B written, \d+ B kept/,
    );
    await j.shot(starter, `logs-truncated-${noisy.slice(-4)}`);
  });
});

it("pauses needs_agent on an adapter's question; the answer builds a new packet", async () => {
  const { approver } = stack();
  await journey(browser, "dispatch-question", async (j) => {
    const page = await j.signIn(approver);
    const runId = await startWithSpawn(page, "dispatch", {
      ...INPUTS,
      fixture_mode: "needs_input",
    });
    await waitForRunStatus(page, "needs_agent");
    const asked = page.getByTestId("adapter-questions");
    await asked.waitFor();
    const text = await asked.innerText();
    expect(text).toContain("q_scope: Which module?");
    expect(text).toContain('answer schema {"type":"string"}');
    const row = attemptsRegion(page).getByTestId("dispatch-attempt").first();
    const cells = (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim());
    expect(cells.slice(3, 5)).toEqual(["blocked", "needs input: q_scope"]);
    // The answer form is generated from the questions: one field per question_id.
    const answer = page.getByRole("form", { name: "Answer agent requests" }).getByLabel("q_scope");
    await j.shot(page, "question");
    await answer.fill("lib");
    await page.getByRole("button", { name: "Submit answer" }).click();
    await waitForRunStatus(page, "sealed");
    const state = await apiQuery<{ attempts: AttemptView[] }>(
      await apiSession(approver),
      "adapters.attempts",
      { runId },
    );
    expect(state.attempts.map((a) => a.dispatch.status)).toEqual(["blocked", "completed"]);
    expect(state.attempts[1]!.dispatch.retry_of).toBe(state.attempts[0]!.dispatch.packet_id);
    expect(state.attempts[1]!.dispatch.packet_id).not.toBe(state.attempts[0]!.dispatch.packet_id);
    await attemptsRegion(page).getByTestId("dispatch-attempt").nth(1).waitFor();
    await j.shot(page, "answered");
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
