/** The outcomes journey's helpers: the CLI against the e2e workspace, run rows of the list. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { ROOT } from "../../scripts/console-services.mjs";
import { stack } from "./journey.js";

const RUNX = join(ROOT, "packages", "runtime", "bin", "runx.cjs");

/**
 * Runs `runx <args> --json` in the e2e workspace with the state the API uses (same workspace,
 * same RUNX_HOME), as a separate process; returns its exit status and envelope.
 */
export function runxCli(args: string[]): {
  status: number | null;
  envelope: { run_id: string; status: string };
} {
  const ws = stack().workspace;
  const result = spawnSync(process.execPath, [RUNX, ...args, "--json"], {
    cwd: ws,
    env: {
      PATH: process.env.PATH,
      HOME: join(ws, "home"),
      LANG: process.env.LANG ?? "C.UTF-8",
      RUNX_CWD: ws,
      RUNX_HOME: join(ws, "home", ".runx"),
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  try {
    return {
      status: result.status,
      envelope: JSON.parse(result.stdout) as { run_id: string; status: string },
    };
  } catch {
    throw new Error(
      `runx ${args.join(" ")} printed no envelope (exit ${result.status}): ${result.stderr}`,
    );
  }
}

/** The list's row of `runId`. */
export function runRow(page: Page, runId: string): Locator {
  return page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
}

/** Waits until the row of `runId` shows the outcome badge `label` (no reload). */
export async function waitForRowOutcome(
  page: Page,
  runId: string,
  label: string,
  timeout = 30_000,
) {
  await runRow(page, runId)
    .getByTestId("run-outcome")
    .filter({ hasText: new RegExp(`^\\s*${label}\\s*$`) })
    .waitFor({ timeout });
}
