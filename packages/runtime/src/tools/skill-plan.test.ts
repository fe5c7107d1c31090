import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsRunxSkillBindOutput } from "../generated/validate-tools-runx-skill-bind.output.js";
import { validateToolsRunxSkillPlanOutput } from "../generated/validate-tools-runx-skill-plan.output.js";
import { canonicalJson } from "../receipts/canonical.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { skillBindTool } from "./skill-bind.js";
import { skillPlanTool } from "./skill-plan.js";
import type { JsonRecord } from "./types.js";
import { failureCode, makeToolContext, successOutput } from "./test-context.js";

const BASE = `sha256:${"a".repeat(64)}`;

function decision(): Record<string, unknown> {
  return {
    schema: "runx.skill.architecture_decision.v1",
    disposition: "build",
    objective: "Create a bounded digest-note skill.",
    operator_value: "One stable digest for a supplied note.",
    knowledge_contract: {
      purpose: "Digest one note.",
      evidence_required: ["One note."],
      decision_logic: ["Hash the exact note."],
      stop_conditions: ["Stop when the note is absent."],
      recovery: ["Resume with a note."],
    },
    required_behaviors: [
      { id: "guide", outcome: "Teach the operator.", lane: "manual" },
      {
        id: "digest",
        outcome: "Digest the note.",
        lane: "native_capability",
        reuse_ref: "data.digest",
      },
    ],
    native_reuse: {
      inspected_capabilities: ["runx.skill.inspect", "data.digest"],
      selected_capabilities: ["data.digest"],
      missing_capabilities: [],
    },
    effects: [{ effect: "read", authority_scopes: [], approval: "none", provider_boundary: false }],
    skill_chain: { context_skills: [], routes: [] },
    resource_budget: {
      max_files: 2,
      max_executable_lines: 0,
      max_fanout: 1,
      max_process_spawns: 0,
      network_allowed: false,
    },
    preservation_obligations: [],
    deletions: [],
    proof_plan: [{ name: "harness", kind: "harness", expected: "The note is digested." }],
  };
}

describe("runx.skill.plan", () => {
  const ctx = makeToolContext();
  const plan = (input: Record<string, unknown>) => skillPlanTool.execute(input as JsonRecord, ctx);

  it("binds the decision to the base digest with the canonical JSON digest of both", async () => {
    const architecture = decision();
    const output = successOutput(await plan({ base_digest: BASE, architecture }));
    expect(validateToolsRunxSkillPlanOutput(output)).toBe(true);
    const expected = `sha256:${createHash("sha256")
      .update(canonicalJson({ base_digest: BASE, architecture }), "utf8")
      .digest("hex")}`;
    expect(output).toEqual({
      architecture_plan: {
        schema: "runx.skill.architecture_plan.v1",
        base_digest: BASE,
        plan_digest: expected,
        architecture,
      },
    });
    const moved = successOutput(
      await plan({ base_digest: `sha256:${"b".repeat(64)}`, architecture }),
    ) as { architecture_plan: { plan_digest: string } };
    expect(moved.architecture_plan.plan_digest).not.toBe(expected);
  });

  it("refuses malformed input by schema: bad digest, unknown nested field, unknown lane", async () => {
    expect(failureCode(await plan({ base_digest: "sha256:abc", architecture: decision() }))).toBe(
      "INPUT_INVALID",
    );
    const extra = decision();
    (extra.knowledge_contract as Record<string, unknown>).unowned = true;
    expect(failureCode(await plan({ base_digest: BASE, architecture: extra }))).toBe(
      "INPUT_INVALID",
    );
    const lane = decision();
    (lane.required_behaviors as Array<Record<string, unknown>>)[0]!.lane = "magic";
    expect(failureCode(await plan({ base_digest: BASE, architecture: lane }))).toBe(
      "INPUT_INVALID",
    );
  });

  const contradictions: Array<[string, (d: Record<string, unknown>) => void, string]> = [
    [
      "no behaviors for a build",
      (d) => (d.required_behaviors = []),
      "architecture.required_behaviors",
    ],
    [
      "needs_core without a missing capability",
      (d) => {
        d.disposition = "needs_core";
        d.required_behaviors = [];
      },
      "architecture.native_reuse.missing_capabilities",
    ],
    [
      "a missing capability on a build",
      (d) => ((d.native_reuse as Record<string, string[]>).missing_capabilities = ["x.y"]),
      "architecture.disposition",
    ],
    [
      "a selected capability that was not inspected",
      (d) =>
        ((d.native_reuse as Record<string, string[]>).selected_capabilities = [
          "data.digest",
          "fs.write",
        ]),
      "architecture.native_reuse.selected_capabilities",
    ],
    [
      "a native behavior without reuse_ref",
      (d) => delete (d.required_behaviors as Array<Record<string, unknown>>)[1]!.reuse_ref,
      "architecture.required_behaviors[1].reuse_ref",
    ],
    [
      "a domain module without justification",
      (d) => ((d.required_behaviors as Array<Record<string, unknown>>)[0]!.lane = "domain_module"),
      "architecture.required_behaviors[0].domain_module_justification",
    ],
    [
      "a provider boundary with no provider lane",
      (d) => ((d.effects as Array<Record<string, unknown>>)[0]!.provider_boundary = true),
      "architecture.effects",
    ],
  ];
  for (const [what, mutate, path] of contradictions) {
    it(`refuses ${what}, naming ${path}`, async () => {
      const architecture = decision();
      mutate(architecture);
      const result = await plan({ base_digest: BASE, architecture });
      expect(failureCode(result)).toBe("INPUT_INVALID");
      expect(result).toMatchObject({ output: { details: { path } } });
    });
  }
});

describe("runx.skill.bind", () => {
  const ctx = makeToolContext();
  const bind = (input: Record<string, unknown>) => skillBindTool.execute(input as JsonRecord, ctx);
  const issuedPlan = async (architecture = decision()): Promise<Record<string, unknown>> => {
    const out = successOutput(
      await skillPlanTool.execute({ base_digest: BASE, architecture } as JsonRecord, ctx),
    ) as { architecture_plan: Record<string, unknown> };
    return out.architecture_plan;
  };
  const draft = (): Record<string, unknown> => ({
    schema: "runx.skill.change_draft.v1",
    decision: "write",
    summary: "Create the manual and the digest graph.",
    non_goals: ["No package code."],
    writes: [
      { path: "SKILL.md", contents: "---\nname: digest-note\n---\n" },
      { path: "X.yaml", contents: "skill: digest-note\n" },
    ],
    deletes: [],
    expected_outputs: [
      { name: "digest_result", value_type: "object", packet: "runx.data.digest.v1" },
    ],
  });

  it("binds a draft to the issued plan, carrying its digests and decision", async () => {
    const plan = await issuedPlan();
    const output = successOutput(await bind({ architecture_plan: plan, change_draft: draft() }));
    expect(validateToolsRunxSkillBindOutput(output)).toBe(true);
    const d = draft();
    expect(output).toEqual({
      change_bundle: {
        schema: "runx.skill.change_bundle.v1",
        decision: "write",
        base_digest: BASE,
        plan_digest: plan.plan_digest,
        architecture: plan.architecture,
        summary: d.summary,
        non_goals: d.non_goals,
        writes: d.writes,
        deletes: [],
        expected_outputs: d.expected_outputs,
      },
    });
  });

  it("refuses a plan edited after planning", async () => {
    const plan = await issuedPlan();
    (plan.architecture as Record<string, unknown>).objective = "Something else entirely.";
    const result = await bind({ architecture_plan: plan, change_draft: draft() });
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(result).toMatchObject({
      output: { details: { path: "architecture_plan.plan_digest" } },
    });
  });

  it("refuses a draft carrying an integrity field or an unknown write field", async () => {
    const plan = await issuedPlan();
    const withDigest = { ...draft(), plan_digest: BASE };
    expect(failureCode(await bind({ architecture_plan: plan, change_draft: withDigest }))).toBe(
      "INPUT_INVALID",
    );
    const d = draft();
    (d.writes as Array<Record<string, unknown>>)[0]!.mode = "executable";
    expect(failureCode(await bind({ architecture_plan: plan, change_draft: d }))).toBe(
      "INPUT_INVALID",
    );
  });

  const shapes: Array<[string, (d: Record<string, unknown>) => void, string]> = [
    ["an empty write", (d) => (d.writes = []), "change_draft.writes"],
    ["a no_skill draft with writes", (d) => (d.decision = "no_skill"), "change_draft.decision"],
    [
      "a decision that conflicts with the disposition",
      (d) => {
        d.decision = "no_change";
        d.writes = [];
      },
      "change_draft.decision",
    ],
    ["an unplanned delete", (d) => (d.deletes = ["old.md"]), "change_draft.deletes"],
  ];
  for (const [what, mutate, path] of shapes) {
    it(`refuses ${what}, naming ${path}`, async () => {
      const plan = await issuedPlan();
      const d = draft();
      mutate(d);
      const result = await bind({ architecture_plan: plan, change_draft: d });
      expect(failureCode(result)).toBe("INPUT_INVALID");
      expect(result).toMatchObject({ output: { details: { path } } });
    });
  }
});

describe("runx.skill.plan through the CLI", () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace("runx-skill-plan-");
  });
  afterEach(() => ws.cleanup());

  const pkg = (): void => {
    ws.write(
      "planner/SKILL.md",
      "---\nname: planner\ndescription: Bind one architecture decision.\n---\n\n# planner\n",
    );
    ws.write(
      "planner/X.yaml",
      [
        "skill: planner",
        "runners:",
        "  default:",
        "    default: true",
        "    type: graph",
        "    inputs:",
        "      base_digest: { type: string, required: true }",
        "      architecture: { type: object, required: true }",
        "    graph:",
        "      name: planner",
        "      steps:",
        "        - id: plan",
        "          tool: runx.skill.plan",
        "          inputs:",
        "            base_digest: $input.base_digest",
        "            architecture: $input.architecture",
        "",
      ].join("\n"),
    );
  };

  it("is listed and inspectable, and runs as a graph step that seals", async () => {
    const inspect = await runx(ws, ["tool", "inspect", "runx.skill.plan", "--json"]);
    expect(inspect.code).toBe(0);
    expect(inspect.json()).toMatchObject({
      tool: { name: "runx.skill.plan", mutating: false, scopes: [] },
    });
    const bindInspect = await runx(ws, ["tool", "inspect", "runx.skill.bind", "--json"]);
    expect(bindInspect.json()).toMatchObject({
      tool: { name: "runx.skill.bind", mutating: false, scopes: [] },
    });
    pkg();
    ws.write("in.json", JSON.stringify({ base_digest: BASE, architecture: decision() }));
    const r = await runx(ws, ["skill", "planner", "--inputs", "in.json", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("runx.skill.architecture_plan.v1");
  });

  it("fails the run, naming the field, for a contradictory decision", async () => {
    pkg();
    const bad = decision();
    bad.required_behaviors = [];
    ws.write("in.json", JSON.stringify({ base_digest: BASE, architecture: bad }));
    const r = await runx(ws, ["skill", "planner", "--inputs", "in.json", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({
      outcome: "failed",
      closure: { disposition: "failed", reason_code: "step_failed" },
    });
    expect(r.stdout).toContain("INPUT_INVALID: runx.skill.plan: build and extension architectures");
    expect(r.stdout + r.stderr).not.toContain("    at ");
  });
});
