/**
 * The rules a change bundle (runx.skill.change_bundle.v1) obeys whoever holds it: runx.skill.bind
 * checks them when it issues the bundle and runx.skill.apply again before touching anything.
 * A write carries at least one write or delete and a non-write carries none; the decision fits
 * the architecture disposition (write with build or extend_existing, no_change with
 * extend_existing, no_skill and needs_core with their own); the deletes are exactly the
 * architecture's planned deletions; and the plan digest binds the base digest and decision.
 * Pure.
 */
import type { JsonRecord } from "../types.js";
import { architectureDigest, refuse } from "./architecture.js";
import type { ArchitectureDecision } from "./architecture.js";

/** A change decision. */
export type ChangeDecision = "write" | "no_skill" | "no_change" | "needs_core";

/** `runx.skill.change_bundle.v1` (schema-valid). */
export interface ChangeBundle extends JsonRecord {
  schema: "runx.skill.change_bundle.v1";
  decision: ChangeDecision;
  base_digest: string;
  plan_digest: string;
  architecture: ArchitectureDecision;
  summary: string;
  non_goals: string[];
  writes: Array<{ path: string; contents: string }>;
  deletes: string[];
  expected_outputs: JsonRecord[];
}

const DISPOSITIONS: Record<ChangeDecision, readonly string[]> = {
  write: ["build", "extend_existing"],
  no_change: ["extend_existing"],
  no_skill: ["no_skill"],
  needs_core: ["needs_core"],
};

/** Throws INPUT_INVALID when the plan digest does not bind `{base_digest, architecture}`. */
export function admitPlanDigest(
  tool: string,
  plan: { base_digest: string; plan_digest: string; architecture: ArchitectureDecision },
  path: string,
): void {
  if (architectureDigest(plan.base_digest, plan.architecture) !== plan.plan_digest) {
    throw refuse(
      tool,
      `${path}.plan_digest`,
      "plan_digest does not bind its base digest and architecture decision",
    );
  }
}

/**
 * Throws INPUT_INVALID (naming the field under `path`) when the bundle's changes, decision,
 * disposition and deletions disagree. The architecture itself is admitted by the caller.
 */
export function admitChangeShape(
  tool: string,
  bundle: Pick<ChangeBundle, "decision" | "writes" | "deletes" | "architecture">,
  path: string,
): void {
  const changes = bundle.writes.length + bundle.deletes.length;
  if (bundle.decision !== "write" && changes > 0) {
    throw refuse(tool, `${path}.decision`, "non-write bundles must not contain writes or deletes");
  }
  if (bundle.decision === "write" && changes === 0) {
    throw refuse(
      tool,
      `${path}.writes`,
      "a write decision must contain at least one write or delete",
    );
  }
  const disposition = bundle.architecture.disposition;
  if (!DISPOSITIONS[bundle.decision].includes(disposition)) {
    throw refuse(
      tool,
      `${path}.decision`,
      `decision ${bundle.decision} conflicts with the architecture disposition ${disposition}`,
    );
  }
  const planned = new Set(bundle.architecture.deletions);
  const bundled = new Set(bundle.deletes);
  if (planned.size !== bundled.size || [...planned].some((p) => !bundled.has(p))) {
    throw refuse(
      tool,
      `${path}.deletes`,
      "deletes must exactly match the architecture's deletions",
    );
  }
}
