/**
 * `runx.skill.bind`: joins an agent-authored change draft to the architecture plan that
 * runx.skill.plan issued, producing the digest-bound change bundle runx.skill.apply consumes.
 * The agent never computes integrity values: the plan digest is recomputed here and must
 * match, so a plan edited after planning is refused. Pure: reads and writes nothing.
 *
 * The bundle must also agree with itself: a write carries at least one write or delete and a
 * non-write carries none; the decision matches the disposition (write with build or
 * extend_existing, no_change with extend_existing, no_skill and needs_core with their own);
 * and the deletes are exactly the architecture's planned deletions.
 */
import inputSchema from "../../schemas/tools/runx-skill-bind.input.schema.json" with { type: "json" };
import outputSchema from "../../schemas/tools/runx-skill-bind.output.schema.json" with { type: "json" };
import { RuntimeError } from "../errors.js";
import { validateToolsRunxSkillBindInput } from "../generated/validate-tools-runx-skill-bind.input.js";
import { defineTool } from "./define-tool.js";
import { admitArchitecture, architectureDigest } from "./skill-plan.js";
import type { ArchitectureDecision } from "./skill-plan.js";
import type { JsonRecord, NativeTool } from "./types.js";

const TOOL = "runx.skill.bind";

type Decision = "write" | "no_skill" | "no_change" | "needs_core";

interface ChangeDraft extends JsonRecord {
  decision: Decision;
  summary: string;
  non_goals: string[];
  writes: Array<{ path: string; contents: string }>;
  deletes: string[];
  expected_outputs: JsonRecord[];
}

interface BindInput {
  architecture_plan: {
    base_digest: string;
    plan_digest: string;
    architecture: ArchitectureDecision & { deletions: string[] };
  };
  change_draft: ChangeDraft;
}

type BindOutput = { change_bundle: JsonRecord };

function refuse(path: string, message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${TOOL}: ${message}`, { path });
}

const DISPOSITIONS: Record<Decision, readonly string[]> = {
  write: ["build", "extend_existing"],
  no_change: ["extend_existing"],
  no_skill: ["no_skill"],
  needs_core: ["needs_core"],
};

/** The `runx.skill.bind` tool. */
export const skillBindTool: NativeTool = defineTool<BindInput, BindOutput>({
  name: TOOL,
  description: "Bind one closed content draft to its native architecture plan.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsRunxSkillBindInput,
  run(input) {
    const plan = input.architecture_plan;
    const draft = input.change_draft;
    admitArchitecture(plan.architecture, "architecture_plan.architecture");
    if (architectureDigest(plan.base_digest, plan.architecture) !== plan.plan_digest) {
      throw refuse(
        "architecture_plan.plan_digest",
        "architecture plan digest does not bind its base digest and decision",
      );
    }
    const changes = draft.writes.length + draft.deletes.length;
    if (draft.decision !== "write" && changes > 0) {
      throw refuse("change_draft.decision", "non-write drafts must not contain writes or deletes");
    }
    if (draft.decision === "write" && changes === 0) {
      throw refuse(
        "change_draft.writes",
        "a write decision must contain at least one write or delete",
      );
    }
    if (!DISPOSITIONS[draft.decision].includes(plan.architecture.disposition)) {
      throw refuse(
        "change_draft.decision",
        `decision ${draft.decision} conflicts with the architecture disposition ${plan.architecture.disposition}`,
      );
    }
    const planned = new Set(plan.architecture.deletions);
    const bundled = new Set(draft.deletes);
    if (planned.size !== bundled.size || [...planned].some((p) => !bundled.has(p))) {
      throw refuse(
        "change_draft.deletes",
        "deletes must exactly match the architecture's deletions",
      );
    }
    const bundle: JsonRecord = {
      schema: "runx.skill.change_bundle.v1",
      decision: draft.decision,
      base_digest: plan.base_digest,
      plan_digest: plan.plan_digest,
      architecture: plan.architecture,
      summary: draft.summary,
      non_goals: draft.non_goals,
      writes: draft.writes,
      deletes: draft.deletes,
      expected_outputs: draft.expected_outputs,
    };
    return Promise.resolve({
      output: { change_bundle: bundle },
      summary: `${draft.decision} ${draft.writes.length} write(s), ${draft.deletes.length} delete(s)`,
    });
  },
});
