/**
 * `runx kernel eval` through the built CLI: a fixture document prints upstream's success
 * envelope with the typed `{kind: "output", value}` result; a refused document prints a
 * failure envelope and exits non-zero.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-kernel-");
});
afterEach(() => ws.cleanup());

const transition = {
  $schema: "../schema/state-machine.schema.json",
  name: "transition-start",
  input: {
    kind: "state-machine.transitionSequentialGraph",
    state: {
      graphId: "g",
      status: "pending",
      steps: [{ stepId: "a", status: "pending", attempts: 0 }],
    },
    event: { type: "start_step", stepId: "a", at: "2026-05-22T00:00:00Z" },
  },
  expected: { kind: "output", value: null },
};

describe("runx kernel eval", () => {
  it("prints the decision as a typed output result", async () => {
    ws.write("fixtures/kernel/state-machine/t.json", JSON.stringify(transition));
    const r = await runx(ws, [
      "kernel",
      "eval",
      "--input",
      "fixtures/kernel/state-machine/t.json",
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      status: "success",
      result: {
        kind: "output",
        value: {
          graphId: "g",
          status: "running",
          steps: [
            { stepId: "a", status: "running", attempts: 1, startedAt: "2026-05-22T00:00:00Z" },
          ],
        },
      },
    });
  });

  it("reads a bare input from stdin", async () => {
    const r = await runx(ws, ["kernel", "eval", "--input", "-", "--json"], {
      stdin: JSON.stringify({
        kind: "state-machine.fanoutSyncDecisionKey",
        decision: { groupId: "group-a", ruleFired: "all_succeeded" },
      }),
    });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      status: "success",
      result: { kind: "output", value: "group-a:all_succeeded" },
    });
  });

  it("fails a malformed input with a failure envelope naming the field", async () => {
    ws.write(
      "bad.json",
      JSON.stringify({
        ...transition,
        input: { ...transition.input, event: { type: "step_succeeded", at: "t" } },
      }),
    );
    const r = await runx(ws, ["kernel", "eval", "--input", "bad.json", "--json"]);
    expect(r.code).not.toBe(0);
    const out = r.json<{
      status: string;
      error: { message: string; details?: { path?: string } };
    }>();
    expect(out.status).toBe("failure");
    expect(out.error.message).toBe("kernel fixture evaluation failed");
    expect(JSON.stringify(out)).toContain("input.event.admissionWitness");
  });

  it("refuses an input kind upstream's kernel does not have", async () => {
    ws.write("sandbox.json", JSON.stringify({ kind: "policy.admitSandbox", sandbox: null }));
    const r = await runx(ws, ["kernel", "eval", "--input", "sandbox.json", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.json<{ status: string }>().status).toBe("failure");
  });
});
