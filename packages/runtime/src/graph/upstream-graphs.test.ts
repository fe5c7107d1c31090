/**
 * The upstream conformance corpus through the graph engine: every graph runner and standalone
 * graph file normalizes, and the fixture graphs (fixtures/graphs/**) run to their documented
 * outcomes with scripted stand-ins for the json-output, echo and failing skills.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseExecutionProfile } from "../parser/execution-profile.js";
import { parseStrictYaml } from "../parser/strict-yaml.js";
import { graphFromRunner, normalizeGraph } from "./document.js";
import type { GraphDoc } from "./document.js";
import { createGraphState, nextActions, resumeGraph } from "./machine.js";
import type { ExecuteStepAction, StepOutcome } from "./machine.js";
import { drive, wrapped } from "./test-support/drive.js";
import type { Executor } from "./test-support/drive.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const upstream = path.resolve(here, "../../../../../shared/conformance/runx-upstream");

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name === "X.yaml") out.push(full);
  }
  return out;
}

const rel = (p: string) => path.relative(upstream, p).split(path.sep).join("/");
const profiles = walk(upstream).sort();
const standalone = [
  "fixtures/graphs/sequential/graph.yaml",
  "fixtures/graphs/sequential/input.yaml",
  "fixtures/graphs/fanout/graph.yaml",
  "fixtures/graphs/fanout/all.yaml",
  "fixtures/graphs/retry/read-only.yaml",
  "fixtures/graphs/retry/mutating-idempotent.yaml",
  "examples/post-merge-publish/graph.yaml",
].filter((p) => existsSync(path.join(upstream, p)));
function standaloneGraph(relative: string): GraphDoc {
  const file = path.join(upstream, relative);
  return normalizeGraph(parseStrictYaml(readFileSync(file, "utf8"), { file }).value, {
    file: relative,
  });
}

/** Stand-ins for the fixture skills by package path: json-output wraps its inputs as `result`. */
function skills(overrides: Record<string, (a: ExecuteStepAction) => StepOutcome> = {}): Executor {
  return (action) => {
    const override = overrides[action.stepId];
    if (override !== undefined) return override(action);
    return { status: "success", output: wrapped("result", action.resolvedInputs) };
  };
}
const failing = (): StepOutcome => ({ status: "failure", reason: "exit 1" });

describe("upstream graph documents", () => {
  it("are present next to the repository", () => {
    expect(profiles.length).toBeGreaterThan(60);
    expect(standalone.length).toBe(7);
  });

  it.each(profiles.map((f) => [rel(f), f]))("normalizes every graph runner of %s", (name, file) => {
    const profile = parseExecutionProfile(readFileSync(file, "utf8"), { file: name });
    for (const [runnerName, runner] of Object.entries(profile.runners)) {
      if (runner.type !== "graph") continue;
      const doc = graphFromRunner(runner, ["runners", runnerName]);
      expect(doc.steps.length).toBeGreaterThan(0);
      expect(nextActions(doc, createGraphState(doc, {})).length).toBeGreaterThan(0);
    }
  });

  it("include well over a hundred graph runners", () => {
    const count = profiles
      .map((f) => parseExecutionProfile(readFileSync(f, "utf8"), { file: rel(f) }))
      .flatMap((p) => Object.values(p.runners))
      .filter((r) => r.type === "graph").length;
    expect(count).toBeGreaterThan(100);
  });

  it.each(standalone.map((f) => [f]))("normalizes the standalone graph %s", (name) => {
    expect(standaloneGraph(name).name).not.toBe("");
  });
});

describe("upstream fixture graphs", () => {
  it("sequential: second receives first's message through context", () => {
    const doc = standaloneGraph("fixtures/graphs/sequential/graph.yaml");
    const run = drive(doc, createGraphState(doc, {}), skills());
    expect(run.executed).toEqual(["first#1", "second#1"]);
    expect(run.state.steps[1]?.output).toMatchObject({
      result: { data: { message: "hello from graph" } },
    });
  });

  it("sequential input: the graph input reaches the step that declares none", () => {
    const doc = standaloneGraph("fixtures/graphs/sequential/input.yaml");
    const action = nextActions(doc, createGraphState(doc, { message: "hi" }))[0];
    expect(action).toMatchObject({ kind: "execute_step", resolvedInputs: { message: "hi" } });
  });

  it("fanout all: synthesize sees finance.budget == approved", () => {
    const doc = standaloneGraph("fixtures/graphs/fanout/all.yaml");
    const run = drive(doc, createGraphState(doc, {}), skills());
    expect(run.state.steps.find((s) => s.stepId === "synthesize")?.output).toMatchObject({
      result: { data: { message: "approved" } },
    });
    expect(run.state.sync[0]).toMatchObject({
      strategy: "all",
      decision: "proceed",
      success_count: 3,
    });
  });

  it("fanout quorum: one failing branch continues and the final output is go", () => {
    const doc = standaloneGraph("fixtures/graphs/fanout/graph.yaml");
    const run = drive(doc, createGraphState(doc, {}), skills({ finance: failing }));
    expect(run.stop.kind).toBe("complete");
    expect(run.state.sync[0]).toMatchObject({
      decision: "proceed",
      success_count: 2,
      failure_count: 1,
    });
    expect(run.state.steps.find((s) => s.stepId === "synthesize")?.output).toMatchObject({
      result: { data: { message: "go" } },
    });
  });

  it("fanout quorum: a risk above the threshold pauses, then approval proceeds", () => {
    const doc = standaloneGraph("fixtures/graphs/fanout/graph.yaml");
    const risky = skills({
      finance: failing,
      risk: (a) => ({
        status: "success",
        output: wrapped("result", { ...a.resolvedInputs, risk_score: 0.91 }),
      }),
    });
    const paused = drive(doc, createGraphState(doc, {}), risky);
    const gate = "fanout.advisors.threshold.risk.result.data.risk_score.above";
    expect(paused.stop).toMatchObject({
      kind: "pause",
      requests: [{ id: gate, kind: "approval" }],
    });
    const resumed = resumeGraph(doc, paused.state, {
      approvals: { [gate]: { approved: true, actor: "human" } },
    });
    expect(drive(doc, resumed, risky).stop.kind).toBe("complete");
  });

  it("retry read-only: attempt 1 fails, attempt 2 succeeds", () => {
    const doc = standaloneGraph("fixtures/graphs/retry/read-only.yaml");
    const run = drive(
      doc,
      createGraphState(doc, {}),
      skills({
        "flaky-read": (a) => (a.attempt === 1 ? failing() : { status: "success", output: {} }),
      }),
    );
    expect(run.executed).toEqual(["flaky-read#1", "flaky-read#2"]);
    expect(run.stop.kind).toBe("complete");
  });

  it("retry mutating-idempotent: the {{request_id}} key allows the retry", () => {
    const doc = standaloneGraph("fixtures/graphs/retry/mutating-idempotent.yaml");
    const run = drive(
      doc,
      createGraphState(doc, {}),
      skills({ deploy: (a) => (a.attempt === 1 ? failing() : { status: "success", output: {} }) }),
    );
    expect(run.executed).toEqual(["deploy#1", "deploy#2"]);
  });

  it("mcp-approval-graph: pauses on gate mcp-approval", () => {
    const file = path.join(upstream, "fixtures/skills/mcp-approval-graph/X.yaml");
    const runner = parseExecutionProfile(readFileSync(file, "utf8")).runners.default;
    if (runner?.type !== "graph") throw new Error("expected a graph runner");
    const doc = graphFromRunner(runner);
    expect(nextActions(doc, createGraphState(doc, {}))).toMatchObject([
      {
        kind: "pause",
        requests: [{ id: "mcp-approval", gate: { reason: "Approve the MCP graph run." } }],
      },
    ]);
  });
});
