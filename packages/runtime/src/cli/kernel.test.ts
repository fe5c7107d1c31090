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
    const out = r.json<{ status: string; error: { code: string; message: string } }>();
    expect(r.code).toBe(1);
    expect(out.status).toBe("failure");
    expect(out.error.code).toBe("invalid_input");
    expect(Object.keys(out.error).sort()).toEqual(["code", "message"]);
    expect(out.error.message).toContain("input.event.admissionWitness");
  });

  // Upstream's kernel surface: exactly {status, error: {code, message}} on stdout.
  it.each([
    [
      "an unknown kind",
      ["--input", "k.json"],
      "invalid_input",
      1,
      "unsupported kernel input kind 'nope'",
    ],
    ["invalid JSON", ["--input", "broken.json"], "invalid_document", 1, undefined],
    ["a missing file", ["--input", "absent.json"], "read_input", 1, undefined],
    ["no --input", [], "invalid_args", 64, "runx kernel eval requires --input <file|->"],
  ])("fails %s with upstream's envelope", async (_what, extra, code, exit, message) => {
    ws.write("k.json", JSON.stringify({ input: { kind: "nope" } }));
    ws.write("broken.json", "{");
    const r = await runx(ws, ["kernel", "eval", ...extra, "--json"]);
    expect(r.code).toBe(exit);
    const out = r.json<{ status: string; error: Record<string, string> }>();
    expect(Object.keys(out).sort()).toEqual(["error", "status"]);
    expect(out.status).toBe("failure");
    expect(Object.keys(out.error).sort()).toEqual(["code", "message"]);
    expect(out.error.code).toBe(code);
    if (message !== undefined) expect(out.error.message).toBe(message);
  });

  it("refuses an input kind upstream's kernel does not have", async () => {
    ws.write("sandbox.json", JSON.stringify({ kind: "policy.admitSandbox", sandbox: null }));
    const r = await runx(ws, ["kernel", "eval", "--input", "sandbox.json", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.json<{ status: string }>().status).toBe("failure");
  });
});
