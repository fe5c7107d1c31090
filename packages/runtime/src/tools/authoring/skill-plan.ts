/**
 * `runx.skill.plan`: admits one agent-authored skill architecture decision (architecture.ts)
 * against the package state runx.skill.inspect reported and binds the two with a
 * runtime-computed digest, so a later change bundle cannot reuse the decision once the package
 * (and so its base digest) has moved. Returns the named `architecture_plan` packet
 * (runx.skill.architecture_plan.v1). Pure: reads and writes nothing.
 */
import inputSchema from "../../../schemas/tools/authoring/runx-skill-plan.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/authoring/runx-skill-plan.output.schema.json" with { type: "json" };
import { validateToolsAuthoringRunxSkillPlanInput } from "../../generated/validate-tools-authoring-runx-skill-plan.input.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import type { NativeTool } from "../types.js";
import {
  admitArchitecture,
  architectureDigest,
  normalizeArchitecture,
  type ArchitectureDecision,
} from "./architecture.js";

const TOOL = "runx.skill.plan";

interface PlanInput {
  base_digest: string;
  architecture: ArchitectureDecision;
}

/** `runx.skill.architecture_plan.v1`. */
export type ArchitecturePlan = {
  schema: "runx.skill.architecture_plan.v1";
  base_digest: string;
  plan_digest: string;
  architecture: ArchitectureDecision;
};

/** The `runx.skill.plan` tool. */
export const skillPlanTool: NativeTool = withNamedOutput(
  defineTool<PlanInput, ArchitecturePlan>({
    name: TOOL,
    description: "Validate and digest-bind one skill architecture decision.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsAuthoringRunxSkillPlanInput,
    run(input) {
      admitArchitecture(TOOL, input.architecture);
      const architecture = normalizeArchitecture(input.architecture);
      const planDigest = architectureDigest(input.base_digest, architecture);
      return Promise.resolve({
        output: {
          schema: "runx.skill.architecture_plan.v1",
          base_digest: input.base_digest,
          plan_digest: planDigest,
          architecture,
        },
        summary: `${architecture.disposition} ${planDigest}`,
      });
    },
  }),
  { name: "architecture_plan", packet: "runx.skill.architecture_plan.v1" },
);
