/** The catalog lists the approvals a bundled payment skill pauses on, before any run. */
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import { makeWorkspace } from "../testing/cli.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

describe("catalog approvals", () => {
  it("shows the payment gates of the spend and charge skills", async () => {
    const ws = makeWorkspace("runx-catalog-approvals-");
    ws.addBundledSkill("spend");
    ws.addBundledSkill("charge");
    ws.addBundledSkill("echo");
    const runtime = createRuntime({ workspaceRoot: ws.root, runxHome: ws.home, env: {} });
    cleanups.push(() => {
      runtime.close();
      ws.cleanup();
    });
    const hits = await runtime.catalog.search({ query: "" });
    const approvals = (name: string) =>
      hits.find((h) => h.name === name)?.runners.flatMap((r) => r.approvals);
    expect(approvals("spend")).toEqual([
      {
        step: "pay",
        tool: "payment.x402_pay",
        operation: null,
        reason: "Pay this exact x402 price to this payee, once.",
      },
    ]);
    expect(approvals("charge")).toEqual([
      {
        step: "settle",
        tool: "provider.mutate",
        operation: "payment.charge.mock",
        reason: "Record this mock charge against the caller's returned credential.",
      },
    ]);
    expect(approvals("echo")).toEqual([]);
  });
});
