import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import type { AgentTaskRunner } from "../parser/runner-types.js";
import type { RunRequest } from "../contracts/envelope.js";
import {
  agentActForRunner,
  agentInstructions,
  buildAgentActRequest,
  outputContractSchema,
  validateAgentAnswer,
} from "./request.js";
import type { SkillContextArtifact } from "./request.js";

const UPSTREAM = "/work/shared/conformance/runx-upstream";

async function upstreamAgentTask(): Promise<{
  body: string;
  name: string;
  runner: AgentTaskRunner;
}> {
  const resolved = await resolveSkillRef(join(UPSTREAM, "fixtures/skills/agent-task"), {
    workspaceRoot: UPSTREAM,
  });
  const pkg = await loadSkillPackage(resolved);
  const runner = pkg.runners.default;
  if (runner?.type !== "agent-task") throw new Error("fixture runner is not agent-task");
  return { body: pkg.body, name: pkg.name, runner };
}

describe("agent_act request", () => {
  it("builds the upstream agent-task fixture's request with its invocation envelope", async () => {
    const { body, name, runner } = await upstreamAgentTask();
    const request = agentActForRunner(runner, {
      skill: name,
      skillBody: body,
      inputs: { prompt: "review this" },
      runId: "rx_test",
    });
    const asRunRequest: RunRequest = request;
    expect(asRunRequest.kind).toBe("agent_act");
    expect(request.id).toBe("agent_task.review-boundary.output");
    expect(request.invocation).toMatchObject({
      agent: "codex",
      task: "review-boundary",
      source_type: "agent-task",
      id: "agent_task.review-boundary.output",
    });
    const envelope = request.invocation.envelope;
    expect(Object.keys(envelope).sort()).toEqual([
      "allowed_tools",
      "current_context",
      "historical_context",
      "inputs",
      "instructions",
      "instructions_sha256",
      "output",
      "provenance",
      "requirements",
      "run_id",
      "skill",
      "step_id",
      "trust_boundary",
    ]);
    expect(envelope.instructions).toBe("Review the prompt and return a structured verdict.");
    const hex = createHash("sha256").update(envelope.instructions).digest("hex");
    expect(envelope.instructions_sha256).toBe(`sha256:${hex}`);
    expect(envelope).toMatchObject({
      allowed_tools: [],
      current_context: [],
      historical_context: [],
      inputs: { prompt: "review this" },
      run_id: "rx_test",
      skill: "reviewer-boundary",
      step_id: null,
      trust_boundary: "untrusted_model_output",
      requirements: { answer_format: "json_object", required_outputs: ["verdict"] },
      provenance: { source_type: "agent-task", runner: "default", skill: "reviewer-boundary" },
      output: {
        type: "object",
        properties: { verdict: { type: "string" } },
        required: ["verdict"],
      },
    });
  });

  it("appends step instructions after the SKILL.md body and lists context skill digests", () => {
    const context: SkillContextArtifact = {
      type: "runx.skill.context",
      label: "loop-operator",
      ref: "./context/loop-operator",
      digest: "sha256:abc",
      bytes: 3,
      content: "abc",
      trust: "untrusted",
    };
    const request = buildAgentActRequest({
      agent: "reviewer",
      task: "review-loop-plan",
      skill: "loop",
      skillBody: "\nBody.\n",
      stepInstructions: "Only the plan.",
      inputs: {},
      allowedTools: ["fs.read"],
      runId: "rx_1",
      stepId: "review",
      currentContext: [context],
    });
    const envelope = request.invocation.envelope;
    expect(envelope.instructions).toBe(agentInstructions("Body.", "Only the plan."));
    expect(envelope.instructions).toMatch(/^Body\.\n\n## Step instructions\n\nOnly the plan\.$/);
    expect(envelope.step_id).toBe("review");
    expect(envelope.allowed_tools).toEqual(["fs.read"]);
    expect(envelope.current_context).toEqual([context]);
    expect(envelope.provenance.context_skills).toEqual([
      { ref: "./context/loop-operator", digest: "sha256:abc" },
    ]);
  });
});

describe("validateAgentAnswer", () => {
  const outputs = { verdict: { type: "string" } };

  it("accepts the upstream resume answer and keeps extra top-level keys", () => {
    expect(validateAgentAnswer(outputs, { verdict: "approve" })).toEqual({
      ok: true,
      value: { verdict: "approve" },
    });
    expect(validateAgentAnswer(outputs, { verdict: "approve", note: "x" }).ok).toBe(true);
  });

  it("names the first bad path: a wrong type, a missing output, a non-object answer", () => {
    expect(validateAgentAnswer(outputs, { verdict: 3 })).toMatchObject({
      ok: false,
      path: "verdict",
    });
    expect(validateAgentAnswer(outputs, {})).toMatchObject({
      ok: false,
      path: "verdict",
      message: "is required",
    });
    expect(validateAgentAnswer(outputs, ["approve"])).toMatchObject({ ok: false, path: "" });
  });

  it("enforces nested declared schemas, including closed objects and enums", () => {
    const nested = {
      report: {
        type: "object",
        schema: {
          required: ["category"],
          additionalProperties: false,
          properties: {
            category: { type: "string", enum: ["bug", "docs"] },
            notes: { type: "array", items: { type: "string" } },
          },
        },
      },
    };
    expect(validateAgentAnswer(nested, { report: { category: "bug" } }).ok).toBe(true);
    expect(validateAgentAnswer(nested, { report: { category: "other" } })).toMatchObject({
      ok: false,
      path: "report.category",
    });
    expect(validateAgentAnswer(nested, { report: { category: "bug", x: 1 } })).toMatchObject({
      ok: false,
      path: "report.x",
    });
    expect(validateAgentAnswer(nested, { report: { category: "bug", notes: [1] } })).toMatchObject({
      ok: false,
      path: "report.notes[0]",
    });
  });

  it("treats required: false outputs as optional and untyped outputs as any value", () => {
    const loose = { summary: { required: false, type: "string" }, data: { type: "json" } };
    expect(outputContractSchema(loose).required).toEqual(["data"]);
    expect(validateAgentAnswer(loose, { data: [1, "x"] }).ok).toBe(true);
    expect(validateAgentAnswer(undefined, { anything: true }).ok).toBe(true);
  });

  it("refuses an output schema that is not valid JSON Schema with PROFILE_INVALID", () => {
    expect(() =>
      validateAgentAnswer({ x: { type: "object", schema: { type: 12 } } }, { x: {} }),
    ).toThrow(expect.objectContaining({ code: "PROFILE_INVALID" }));
  });
});
