import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsAuthoringRunxSkillBindOutput } from "../../generated/validate-tools-authoring-runx-skill-bind.output.js";
import { validateToolsAuthoringRunxSkillPlanOutput } from "../../generated/validate-tools-authoring-runx-skill-plan.output.js";
import { canonicalJson } from "../../receipts/canonical.js";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";
import type { JsonRecord } from "../types.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import { skillBindTool } from "./skill-bind.js";
import { skillPlanTool } from "./skill-plan.js";
import { BASE, decision, draft, noSkillDecision } from "./decisions.test-kit.js";

/** The packet inside a named output envelope. */
function packet(output: JsonRecord, name: string): Record<string, unknown> {
  return (output[name] as { data: Record<string, unknown> }).data;
}

describe("runx.skill.plan", () => {
  const ctx = makeToolContext();
  const plan = (input: Record<string, unknown>) => skillPlanTool.execute(input as JsonRecord, ctx);

  it("binds the decision to the base digest with the canonical JSON digest of both", async () => {
    const architecture = decision();
    const output = successOutput(await plan({ base_digest: BASE, architecture }));
    expect(validateToolsAuthoringRunxSkillPlanOutput(packet(output, "architecture_plan"))).toBe(
      true,
    );
    const expected = `sha256:${createHash("sha256")
      .update(canonicalJson({ base_digest: BASE, architecture }), "utf8")
      .digest("hex")}`;
    expect(output).toEqual({
      architecture_plan: {
        data: {
          schema: "runx.skill.architecture_plan.v1",
          base_digest: BASE,
          plan_digest: expected,
          architecture,
        },
      },
    });
    const moved = successOutput(
      await plan({ base_digest: `sha256:${"b".repeat(64)}`, architecture }),
    );
    expect(packet(moved, "architecture_plan").plan_digest).not.toBe(expected);
  });

  it("digests an optional part given as null like one left out", async () => {
    const withNull = { ...noSkillDecision(), identity: null, chain_use: null };
    const a = packet(
      successOutput(await plan({ base_digest: BASE, architecture: withNull })),
      "architecture_plan",
    );
    const b = packet(
      successOutput(await plan({ base_digest: BASE, architecture: noSkillDecision() })),
      "architecture_plan",
    );
    expect(a.plan_digest).toBe(b.plan_digest);
    expect(a.architecture).toEqual(noSkillDecision());
  });

  it("admits an internal package with no direct_use and a no_skill decision with no identity", async () => {
    const internal = decision();
    (internal.identity as Record<string, unknown>).visibility = "internal";
    delete internal.direct_use;
    expect((await plan({ base_digest: BASE, architecture: internal })).status).toBe("success");
    expect((await plan({ base_digest: BASE, architecture: noSkillDecision() })).status).toBe(
      "success",
    );
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
    const result = await plan({ base_digest: BASE, architecture: lane });
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(result).toMatchObject({
      output: { details: { path: "architecture.required_behaviors.0.lane" } },
    });
    const action = decision();
    (action.identity as Record<string, unknown>).action = "fork";
    expect(failureCode(await plan({ base_digest: BASE, architecture: action }))).toBe(
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
    ["a build without an identity", (d) => delete d.identity, "architecture.identity"],
    [
      "a build that keeps a current name",
      (d) => Object.assign(d.identity as object, { action: "keep", current_name: "x" }),
      "architecture.identity.action",
    ],
    [
      "a rename to the same name",
      (d) => {
        d.disposition = "extend_existing";
        Object.assign(d.identity as object, { action: "rename", current_name: "digest-note" });
      },
      "architecture.identity.action",
    ],
    [
      "an internalize that stays public",
      (d) => {
        d.disposition = "extend_existing";
        Object.assign(d.identity as object, { action: "internalize", current_name: "digest-note" });
      },
      "architecture.identity.visibility",
    ],
    ["a public package without direct_use", (d) => delete d.direct_use, "architecture.direct_use"],
    [
      "a public package without a non-trigger request",
      (d) => ((d.direct_use as Record<string, unknown>).non_trigger_requests = []),
      "architecture.direct_use",
    ],
    ["a public package without chain_use", (d) => delete d.chain_use, "architecture.chain_use"],
    [
      "a public package whose chain repeats nothing",
      (d) => ((d.chain_use as Record<string, unknown>).must_not_repeat = []),
      "architecture.chain_use",
    ],
    [
      "a public package without the three operator proofs",
      (d) => (d.proof_plan = [{ name: "h", kind: "harness", expected: "Passes." }]),
      "architecture.proof_plan",
    ],
    [
      "an internal package that declares direct_use",
      (d) => ((d.identity as Record<string, unknown>).visibility = "internal"),
      "architecture.direct_use",
    ],
    [
      "an internalized package without chain_use",
      (d) => {
        d.disposition = "extend_existing";
        Object.assign(d.identity as object, {
          action: "internalize",
          current_name: "digest-note",
          visibility: "internal",
        });
        delete d.direct_use;
        delete d.chain_use;
      },
      "architecture.chain_use",
    ],
    [
      "a no_skill decision that invents an identity",
      (d) => {
        Object.assign(d, noSkillDecision());
        d.identity = decision().identity;
      },
      "architecture.identity",
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
    );
    return packet(out, "architecture_plan");
  };
  it("binds a draft to the issued plan, carrying its digests and decision", async () => {
    const plan = await issuedPlan();
    const output = successOutput(await bind({ architecture_plan: plan, change_draft: draft() }));
    expect(validateToolsAuthoringRunxSkillBindOutput(packet(output, "change_bundle"))).toBe(true);
    const d = draft();
    expect(packet(output, "change_bundle")).toEqual({
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
