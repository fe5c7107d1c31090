/**
 * Journey: receipts you can read and check. A gated run (e2e/fixtures/skills/gated) paused,
 * approved by a second operator and resumed has several receipts in two trees (the paused
 * receipt and the seal that continues it). Its receipt page says who signed it (issuer, key
 * id, signature mode) and what it commits, in words; Verify re-checks it on the API and says
 * "verified". A step receipt edited on disk is reported invalid with the failed check named.
 * The run page's "Evidence bundle" link downloads the bundle, and `runx verify --bundle`
 * (the built CLI) counts the same receipts the console shows. The receipt page and the run's
 * receipts page pass axe and do not scroll sideways at 1280 and 390 px.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT } from "../scripts/console-services.mjs";
import { checkLayouts } from "./harness/a11y.js";
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

const RUNX = join(ROOT, "packages", "runtime", "bin", "runx.cjs");

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Dag {
  rootReceiptId: string;
  nodes: Array<{ id: string; name: string; disposition: string | null; status: string }>;
  edges: Array<{ from: string; to: string; kind: string }>;
}

/** A gated run started by the admin, approved by the approver, resumed to its seal. */
async function sealedGatedRun(): Promise<string> {
  const { admin, approver } = stack();
  const ada = await apiSession(admin);
  const grace = await apiSession(approver);
  const { runId } = await apiMutate<{ runId: string }>(ada, "runs.start", {
    skill: "skills/gated",
    inputs: { message: `receipts journey ${Date.now()}` },
  });
  const gate = await pendingFor(grace, runId);
  await apiMutate(grace, "approvals.decide", {
    runId,
    gateId: gate.gateId,
    decision: "approve",
    reason: "e2e receipts: release it",
  });
  await eventually(`run ${runId} to seal`, async () => {
    const detail = await apiQuery<{ run: { status: string } }>(grace, "runs.get", { runId });
    return detail.run.status === "sealed" ? true : undefined;
  });
  return runId;
}

function receiptFile(receiptId: string): string {
  return join(stack().workspace, ".runx", "receipts", `${receiptId.replace(":", "-")}.json`);
}

/** `runx verify --bundle <file> --json` with the API's receipt key trusted. */
function verifyBundle(file: string): { valid: boolean; receipt_count: number } {
  const { kid, publicKeyBase64 } = stack().receiptKey;
  const result = spawnSync(process.execPath, [RUNX, "verify", "--bundle", file, "--json"], {
    cwd: stack().workspace,
    env: {
      PATH: process.env.PATH,
      HOME: join(stack().workspace, "home"),
      LANG: process.env.LANG ?? "C.UTF-8",
      RUNX_RECEIPT_VERIFY_KID: kid,
      RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64: publicKeyBase64,
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  try {
    return JSON.parse(result.stdout) as { valid: boolean; receipt_count: number };
  } catch {
    throw new Error(
      `runx verify --bundle printed no report (exit ${result.status}): ${result.stderr}`,
    );
  }
}

it("shows a receipt's signer, commitments and named checks, verifies it, names a tampered check, and downloads a bundle the CLI counts alike", async () => {
  const { consoleUrl, viewer, receiptKey } = stack();
  const runId = await sealedGatedRun();
  const session = await apiSession(viewer);
  const dag = await apiQuery<Dag>(session, "receipts.dag", { runId });
  expect(dag.nodes.length).toBeGreaterThan(3);
  expect(dag.edges.some((e) => e.kind === "previous")).toBe(true);
  const scratch = mkdtempSync(join(tmpdir(), "runx-e2e-bundle-"));

  await journey(browser, "receipts", async (j) => {
    const page = await j.signIn(viewer);

    // The run's receipts page: the count, and the DAG with the paused receipt drawn.
    await page.goto(`${consoleUrl}/runs/${runId}/receipts`);
    const countText = await page.getByTestId("receipt-count").innerText();
    const shown = Number(/recorded (\d+) receipt/.exec(countText)?.[1]);
    expect(shown).toBe(dag.nodes.length);
    await page.getByTestId("dag-node").first().waitFor({ timeout: 20_000 });
    const paused = page.locator('[data-testid="dag-node"][data-disposition="deferred"]');
    await paused.first().waitFor();
    expect(await paused.first().getAttribute("aria-label")).toMatch(/deferred \(paused\)/);
    await checkLayouts(page, "dag", j);

    // The root receipt in words: who signed it and what it commits.
    await page.goto(`${consoleUrl}/receipts/${encodeURIComponent(dag.rootReceiptId)}`);
    await page.getByRole("heading", { name: "Receipt", exact: true }).waitFor();
    const signer = page.getByTestId("signer");
    expect(await signer.innerText()).toContain("CI signer (ci)");
    expect((await page.getByTestId("signer-kid").innerText()).trim()).toBe(receiptKey.kid);
    expect(await page.getByTestId("signature-mode").innerText()).toBe("Ed25519 signature");
    const commits = await page.getByTestId("commits").innerText();
    expect(commits).toMatch(/Package digest\s+sha256:\S+ — committed by the signed intent key/);
    expect(commits).toMatch(
      /Execution closure digest\s+sha256:\S+ — recorded in unsigned metadata/,
    );
    expect(commits).toMatch(/Content hash\s+sha256:\S+ — signed/);
    expect(commits).toMatch(/Inputs digest\s+no separate input commitment/);
    expect(await page.getByTestId("children").locator("li").count()).toBeGreaterThan(0);
    expect(await page.getByTestId("previous").innerText()).toContain(
      "present, matches the committed digest",
    );
    await page.getByTestId("run-link").waitFor();
    expect(await page.getByTestId("run-link").getAttribute("href")).toBe(`/runs/${runId}`);

    // A step commits its inputs and outputs; it names its parent, linked.
    const step = dag.edges
      .filter((e) => e.kind === "child" && e.from === dag.rootReceiptId)
      .at(-1)!.to;
    await page.getByTestId("children").locator(`[data-receipt-link="${step}"] a`).click();
    await page.waitForURL((url) => url.pathname === `/receipts/${encodeURIComponent(step)}`);
    const stepCommits = await page.getByTestId("commits").innerText();
    expect(stepCommits).toMatch(/Package digest\s+sha256:\S+ — committed by the signed intent key/);
    expect(stepCommits).toMatch(/Content hash\s+sha256:\S+ — signed/);
    expect(stepCommits).toMatch(
      /Outputs digest\s+output sha256:\S+ stdout sha256:\S+ stderr sha256:/,
    );
    expect(await page.getByTestId("parents").innerText()).toContain(dag.rootReceiptId);
    await page.getByTestId("parents").getByRole("link", { name: dag.rootReceiptId }).click();
    await page.waitForURL(
      (url) => url.pathname === `/receipts/${encodeURIComponent(dag.rootReceiptId)}`,
    );

    // Verify re-checks it on the API.
    await page.getByRole("button", { name: "Verify" }).click();
    const result = page.getByTestId("verification-result");
    await result.filter({ hasText: "re-checked" }).waitFor({ timeout: 20_000 });
    expect((await page.getByTestId("verification-status").innerText()).trim()).toBe("verified");
    expect(await page.getByTestId("failed-check").count()).toBe(0);
    await checkLayouts(page, "receipt", j);

    // A step receipt edited on disk: its page names the check that fails.
    const original = readFileSync(receiptFile(step), "utf8");
    try {
      writeFileSync(
        receiptFile(step),
        original.replace(/"summary":"([^"]*)"/, '"summary":"$1 (edited on disk)"'),
      );
      await page.goto(`${consoleUrl}/receipts/${encodeURIComponent(step)}`);
      await page.getByRole("button", { name: "Verify" }).click();
      await result.filter({ hasText: "re-checked" }).waitFor({ timeout: 20_000 });
      expect((await page.getByTestId("verification-status").innerText()).trim()).toBe("invalid");
      expect(await page.getByTestId("failed-check").innerText()).toBe(
        "Failed check: receipt id is the digest of its body — receipt id is not the digest of its body",
      );
      expect(await page.getByTestId("verdict").innerText()).toBe(
        "Not valid: receipt id is not the digest of its body.",
      );
      await j.shot(page, "tampered");
    } finally {
      writeFileSync(receiptFile(step), original);
    }

    // The run page's link downloads the bundle; the CLI counts what the console showed.
    await page.goto(`${consoleUrl}/runs/${runId}`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Evidence bundle" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`evidence-${runId}.json`);
    const file = join(scratch, download.suggestedFilename());
    await download.saveAs(file);
    const response = await page.request.get(`${consoleUrl}/runs/${runId}/bundle`);
    expect(response.headers()["content-disposition"]).toBe(
      `attachment; filename="evidence-${runId}.json"`,
    );
    const report = verifyBundle(file);
    expect(report.valid).toBe(true);
    expect(report.receipt_count).toBe(shown);
  });
  rmSync(scratch, { recursive: true, force: true });
});

it("draws the two identical pauses of a run as one node with a count, and the CLI counts every receipt", async () => {
  const { admin, approver, viewer, consoleUrl } = stack();
  const ada = await apiSession(admin);
  const grace = await apiSession(approver);
  const { runId } = await apiMutate<{ runId: string }>(ada, "runs.start", {
    skill: "skills/receipts-two-pauses",
    inputs: { message: `two pauses ${Date.now()}` },
  });
  await eventually(`run ${runId} to wait for its reviewer`, async () => {
    const detail = await apiQuery<{ run: { status: string } }>(ada, "runs.get", { runId });
    return detail.run.status === "needs_agent" ? true : undefined;
  });
  await apiMutate(ada, "runs.answer", {
    runId,
    answers: { "agent_task.review-message.output": { decision: "approve" } },
  });
  const gate = await pendingFor(grace, runId);
  await apiMutate(grace, "approvals.decide", {
    runId,
    gateId: gate.gateId,
    decision: "approve",
    reason: "e2e receipts: reviewed, release it",
  });
  await eventually(`run ${runId} to seal`, async () => {
    const detail = await apiQuery<{ run: { status: string } }>(grace, "runs.get", { runId });
    return detail.run.status === "sealed" ? true : undefined;
  });
  const session = await apiSession(viewer);
  const dag = await apiQuery<Dag>(session, "receipts.dag", { runId });
  const pauses = dag.nodes.filter((n) => n.disposition === "deferred");
  expect(pauses).toHaveLength(2);

  await journey(browser, "receipts-two-pauses", async (j) => {
    const page = await j.signIn(viewer);
    await page.goto(`${consoleUrl}/runs/${runId}/receipts`);
    const countText = await page.getByTestId("receipt-count").innerText();
    const shown = Number(/recorded (\d+) receipt/.exec(countText)?.[1]);
    expect(shown).toBe(dag.nodes.length);
    const drawn = page.getByTestId("dag-node");
    await drawn.first().waitFor({ timeout: 20_000 });
    expect(await drawn.count()).toBe(dag.nodes.length - 1);
    const collapsed = page.locator('[data-testid="dag-node"][data-receipt-count="2"]');
    expect(await collapsed.getAttribute("data-disposition")).toBe("deferred");
    expect(await collapsed.getAttribute("aria-label")).toMatch(
      /×2 .*deferred \(paused\) — receipts-two-pauses_default, 2 identical continuation receipts/,
    );
    await collapsed.focus();
    await page.keyboard.press("Enter");
    const listed = page.getByTestId("collapsed-receipts");
    await listed.waitFor({ timeout: 20_000 });
    for (const pause of pauses) {
      await listed.getByRole("link", { name: pause.id }).waitFor();
    }
    await checkLayouts(page, "dag", j);

    const bundle = await apiQuery<unknown>(session, "receipts.bundle", { runId });
    const scratch = mkdtempSync(join(tmpdir(), "runx-e2e-bundle-"));
    try {
      const file = join(scratch, `evidence-${runId}.json`);
      writeFileSync(file, JSON.stringify(bundle));
      const report = verifyBundle(file);
      expect(report.valid).toBe(true);
      expect(report.receipt_count).toBe(shown);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
