/**
 * `runx.skill.plan`: admits one agent-authored skill architecture decision against the package
 * state runx.skill.inspect reported, and binds the two with a runtime-computed digest. The
 * plan digest is sha256 over the runx.stable-json.v1 canonical JSON of
 * `{base_digest, architecture}`, so a later change bundle cannot reuse the decision once the
 * package (and so its base digest) has moved. Pure: reads and writes nothing.
 *
 * Beyond the closed schema, a decision must be internally consistent: building or extending
 * needs behaviours and a proof plan; missing native capabilities go with needs_core and only
 * with it; selected capabilities must have been inspected; a native-capability behaviour names
 * a selected capability and a domain-module behaviour says why; and a provider-adapter lane is
 * declared exactly when some effect crosses the provider boundary.
 */
import inputSchema from "../../schemas/tools/runx-skill-plan.input.schema.json" with { type: "json" };
import outputSchema from "../../schemas/tools/runx-skill-plan.output.schema.json" with { type: "json" };
import { RuntimeError } from "../errors.js";
import { validateToolsRunxSkillPlanInput } from "../generated/validate-tools-runx-skill-plan.input.js";
import { hashCanonical } from "../receipts/canonical.js";
import { defineTool } from "./define-tool.js";
import type { JsonRecord, NativeTool } from "./types.js";

const TOOL = "runx.skill.plan";

type Lane =
  | "manual"
  | "graph"
  | "agent_task"
  | "native_capability"
  | "domain_module"
  | "cli_tool"
  | "provider_adapter";

/** The parts of a schema-valid architecture decision the admission rules read. */
export interface ArchitectureDecision extends JsonRecord {
  disposition: "build" | "extend_existing" | "no_skill" | "needs_core";
  required_behaviors: Array<{
    id: string;
    lane: Lane;
    reuse_ref?: string;
    domain_module_justification?: string;
  }>;
  native_reuse: {
    inspected_capabilities: string[];
    selected_capabilities: string[];
    missing_capabilities: string[];
  };
  effects: Array<{ provider_boundary: boolean }>;
  proof_plan: JsonRecord[];
}

interface PlanInput {
  base_digest: string;
  architecture: ArchitectureDecision;
}

type PlanOutput = {
  architecture_plan: {
    schema: "runx.skill.architecture_plan.v1";
    base_digest: string;
    plan_digest: string;
    architecture: ArchitectureDecision;
  };
};

function refuse(path: string, message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${TOOL}: ${message}`, { path });
}

/** Throws INPUT_INVALID (naming the field) when a decision contradicts itself. */
export function admitArchitecture(architecture: ArchitectureDecision, path = "architecture"): void {
  const implementsPackage =
    architecture.disposition === "build" || architecture.disposition === "extend_existing";
  if (
    implementsPackage &&
    (architecture.required_behaviors.length === 0 || architecture.proof_plan.length === 0)
  ) {
    throw refuse(
      `${path}.required_behaviors`,
      "build and extension architectures require behaviors and a proof plan",
    );
  }
  const missing = architecture.native_reuse.missing_capabilities;
  if (architecture.disposition === "needs_core" && missing.length === 0) {
    throw refuse(
      `${path}.native_reuse.missing_capabilities`,
      "a needs_core architecture must name at least one missing native capability",
    );
  }
  if (architecture.disposition !== "needs_core" && missing.length > 0) {
    throw refuse(
      `${path}.disposition`,
      "missing native capabilities require a needs_core disposition",
    );
  }
  const inspected = new Set(architecture.native_reuse.inspected_capabilities);
  const selected = new Set(architecture.native_reuse.selected_capabilities);
  for (const name of selected) {
    if (!inspected.has(name)) {
      throw refuse(
        `${path}.native_reuse.selected_capabilities`,
        `selected capability ${JSON.stringify(name)} is not among inspected_capabilities`,
      );
    }
  }
  architecture.required_behaviors.forEach((behavior, index) => {
    const at = `${path}.required_behaviors[${index}]`;
    if (behavior.lane === "domain_module" && behavior.domain_module_justification === undefined) {
      throw refuse(
        `${at}.domain_module_justification`,
        `domain-module behavior ${JSON.stringify(behavior.id)} requires a justification`,
      );
    }
    if (behavior.lane === "native_capability") {
      if (behavior.reuse_ref === undefined) {
        throw refuse(
          `${at}.reuse_ref`,
          `native behavior ${JSON.stringify(behavior.id)} requires reuse_ref`,
        );
      }
      if (!selected.has(behavior.reuse_ref)) {
        throw refuse(
          `${at}.reuse_ref`,
          `native behavior ${JSON.stringify(behavior.id)} must reference a selected capability`,
        );
      }
    }
  });
  const providerLane = architecture.required_behaviors.some((b) => b.lane === "provider_adapter");
  const providerEffect = architecture.effects.some((e) => e.provider_boundary);
  if (providerLane !== providerEffect) {
    throw refuse(
      `${path}.effects`,
      "a provider_adapter behavior and a provider_boundary effect must be declared together",
    );
  }
}

/** The digest binding a base package digest to one architecture decision. */
export function architectureDigest(baseDigest: string, architecture: ArchitectureDecision): string {
  return hashCanonical({ base_digest: baseDigest, architecture });
}

/** The `runx.skill.plan` tool. */
export const skillPlanTool: NativeTool = defineTool<PlanInput, PlanOutput>({
  name: TOOL,
  description: "Validate and digest-bind one skill architecture decision.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsRunxSkillPlanInput,
  run(input) {
    admitArchitecture(input.architecture);
    const planDigest = architectureDigest(input.base_digest, input.architecture);
    return Promise.resolve({
      output: {
        architecture_plan: {
          schema: "runx.skill.architecture_plan.v1",
          base_digest: input.base_digest,
          plan_digest: planDigest,
          architecture: input.architecture,
        },
      },
      summary: `${input.architecture.disposition} ${planDigest}`,
    });
  },
});
