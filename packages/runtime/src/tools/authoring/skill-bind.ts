/**
 * `runx.skill.bind`: joins an agent-authored change draft to the architecture plan that
 * runx.skill.plan issued, producing the digest-bound named `change_bundle` packet
 * (runx.skill.change_bundle.v1) runx.skill.apply consumes. The agent never computes integrity
 * values: the plan digest is recomputed here and must match, so a plan edited after planning
 * is refused; the bundle must obey change-shape.ts. Pure: reads and writes nothing.
 */
import inputSchema from "../../../schemas/tools/authoring/runx-skill-bind.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/authoring/runx-skill-bind.output.schema.json" with { type: "json" };
import { validateToolsAuthoringRunxSkillBindInput } from "../../generated/validate-tools-authoring-runx-skill-bind.input.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import type { JsonRecord, NativeTool } from "../types.js";
import { admitArchitecture, normalizeArchitecture } from "./architecture.js";
import { admitChangeShape, admitPlanDigest } from "./change-shape.js";
import type { ChangeBundle, ChangeDecision } from "./change-shape.js";
import type { ArchitecturePlan } from "./skill-plan.js";

const TOOL = "runx.skill.bind";

interface BindInput {
  architecture_plan: ArchitecturePlan;
  change_draft: {
    decision: ChangeDecision;
    summary: string;
    non_goals: string[];
    writes: Array<{ path: string; contents: string }>;
    deletes: string[];
    expected_outputs: JsonRecord[];
  };
}

/** The `runx.skill.bind` tool. */
export const skillBindTool: NativeTool = withNamedOutput(
  defineTool<BindInput, ChangeBundle>({
    name: TOOL,
    description: "Bind one closed content draft to its native architecture plan.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsAuthoringRunxSkillBindInput,
    run(input) {
      const plan = input.architecture_plan;
      const draft = input.change_draft;
      admitArchitecture(TOOL, plan.architecture, "architecture_plan.architecture");
      admitPlanDigest(TOOL, plan, "architecture_plan");
      const architecture = normalizeArchitecture(plan.architecture);
      admitChangeShape(TOOL, { ...draft, architecture }, "change_draft");
      const bundle: ChangeBundle = {
        schema: "runx.skill.change_bundle.v1",
        decision: draft.decision,
        base_digest: plan.base_digest,
        plan_digest: plan.plan_digest,
        architecture,
        summary: draft.summary,
        non_goals: draft.non_goals,
        writes: draft.writes,
        deletes: draft.deletes,
        expected_outputs: draft.expected_outputs,
      };
      return Promise.resolve({
        output: bundle,
        summary: `${draft.decision} ${draft.writes.length} write(s), ${draft.deletes.length} delete(s)`,
      });
    },
  }),
  { name: "change_bundle", packet: "runx.skill.change_bundle.v1" },
);
