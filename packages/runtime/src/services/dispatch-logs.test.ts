import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime } from "../create-runtime.js";
import { adapterRuntime, adapterWorkspace, goodInputs } from "../adapters/test-support.js";
import { LOG_DISPLAY_BYTES } from "./dispatch-logs.js";

const roots: string[] = [];
const runtimes: Runtime[] = [];
afterEach(() => {
  for (const runtime of runtimes.splice(0)) runtime.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function dispatched(
  mode: string,
): Promise<{ root: string; runtime: Runtime; runId: string }> {
  const root = adapterWorkspace();
  roots.push(root);
  const runtime = adapterRuntime(root);
  runtimes.push(runtime);
  runtime.adapters.trust("fake-local");
  const envelope = await runtime.runSkill({
    ref: "dispatch",
    inputs: goodInputs({ fixture_mode: mode }),
    secretEnv: [],
    allowSpawn: true,
  });
  expect(envelope.status).toBe("sealed");
  return { root, runtime, runId: envelope.run_id };
}

describe("dispatch logs for the console", () => {
  it("shows what was kept, redacted, with the truncation facts of the receipt and a page cap", async () => {
    const { root, runtime, runId } = await dispatched("noisy_stdout:300000");
    const [stdout, stderr] = runtime.adapters.logs(runId);
    expect(stdout).toMatchObject({
      step_id: "dispatch",
      attempt: 1,
      stream: "stdout",
      truncated: true,
      intact: true,
      display_truncated: true,
    });
    expect(stdout!.bytes_total).toBeGreaterThanOrEqual(300_000);
    expect(stdout!.bytes_retained).toBeLessThan(stdout!.bytes_total);
    expect(Buffer.byteLength(stdout!.text)).toBeLessThanOrEqual(LOG_DISPLAY_BYTES);
    expect(stdout!.text.endsWith("\n")).toBe(true);
    expect(stderr).toMatchObject({ stream: "stderr", truncated: false, intact: true, text: "" });

    // A log changed after its receipt was signed is reported and not shown.
    appendFileSync(
      join(root, ".runx", "runs", runId, "dispatch", "dispatch", "1", "stderr.log"),
      "x",
    );
    const [, altered] = runtime.adapters.logs(runId);
    expect(altered).toMatchObject({ stream: "stderr", intact: false, text: "" });
  });

  it("never shows the workspace path or a bearer token the adapter printed", async () => {
    const { root, runtime, runId } = await dispatched("secret_echo");
    const [stdout] = runtime.adapters.logs(runId);
    expect(stdout).toMatchObject({ intact: true, truncated: false, display_truncated: false });
    expect(stdout!.text).toContain("cwd=<workspace>/");
    expect(stdout!.text).not.toContain(root);
    expect(stdout!.text).not.toContain("abcdefghijklmnop1234");
  });
});
