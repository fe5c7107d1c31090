/**
 * The `trace` of a sealed graph run's envelope: the graph's name, how it ended, and each
 * executed step by reference (step id, what ran, success or failure, its receipt id), never
 * its payload. Paused runs and non-graph runs carry no trace.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addAnswersReview, REVIEW_REQUEST } from "../testing/answers-fixture.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: unknown;
  trace?: unknown;
}

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-graph-trace-");
});
afterEach(() => ws.cleanup());

describe("the trace of a graph run", () => {
  it("names each executed step by reference once the graph seals, and never while paused", async () => {
    addAnswersReview(ws);
    const paused = await runx(ws, ["skill", "skills/answers-review", "--subject", "v2", "--json"]);
    expect(paused.code).toBe(2);
    const pausedEnv = paused.json<Envelope>();
    expect(pausedEnv).not.toHaveProperty("trace");
    const sealed = await runx(ws, ["resume", pausedEnv.run_id, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [REVIEW_REQUEST]: { decision: "approve", note: "ok" } } }),
    });
    expect(sealed.code).toBe(0);
    const env = sealed.json<Envelope>();
    const graph = JSON.parse(ws.read(`.runx/receipts/sha256-${env.receipt_id.slice(7)}.json`)) as {
      metadata?: { steps?: Array<{ step_id: string; receipt_id: string }> };
    };
    const reviewReceipt = graph.metadata?.steps?.find((s) => s.step_id === "review")?.receipt_id;
    expect(reviewReceipt).toMatch(/^sha256:/);
    expect(env.trace).toEqual({
      graph: "answers-review",
      status: "succeeded",
      steps: [
        {
          step_id: "review",
          skill: "run:agent-task",
          status: "success",
          receipt_id: reviewReceipt,
        },
      ],
    });
    // References, not payloads: the answer is in the result, never repeated in the trace.
    expect(JSON.stringify(env.trace)).not.toContain("approve");
  });

  it("says how a graph ended when a step fails, and names tool steps", async () => {
    ws.write("skills/pair/SKILL.md", "---\nname: pair\n---\nDigest a value, then read a file.\n");
    ws.write(
      "skills/pair/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: pair-graph",
        "      steps:",
        "        - id: digest",
        "          tool: data.digest",
        "          inputs:",
        "            value: {a: 1}",
        "        - id: read",
        "          tool: fs.read",
        "          scopes: [fs.read]",
        "          inputs:",
        "            path: missing.txt",
        "",
      ].join("\n"),
    );
    const r = await runx(ws, ["skill", "skills/pair", "--json"]);
    expect(r.code).toBe(1);
    const env = r.json<Envelope>();
    expect(env.status).toBe("sealed");
    expect(env.trace).toMatchObject({
      graph: "pair-graph",
      status: expect.stringMatching(/^(failed|blocked)$/),
      steps: [
        { step_id: "digest", skill: "tool:data.digest", status: "success" },
        { step_id: "read", skill: "tool:fs.read", status: "failure" },
      ],
    });
  });

  it("is absent from a run that is not a graph", async () => {
    ws.addBundledSkill("echo");
    const r = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Envelope>()).not.toHaveProperty("trace");
  });
});
