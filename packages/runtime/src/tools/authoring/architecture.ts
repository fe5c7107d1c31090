/**
 * The admission rules of one `runx.skill.architecture_decision.v1` beyond its closed schema,
 * shared by runx.skill.plan, runx.skill.bind and runx.skill.apply, and the plan digest that
 * binds a decision to the package state runx.skill.inspect reported. Pure.
 *
 * A decision must agree with itself: building or extending needs behaviours and a proof plan;
 * missing native capabilities go with needs_core and only with it; a package-implementing
 * decision names its identity (create a new name, keep / internalize the current one, or
 * rename it), a public package states how it is used directly and in a chain and plans the
 * three operator proofs, an internal one declares no direct-use trigger; selected capabilities
 * were inspected; a native-capability behaviour names a selected capability and a
 * domain-module behaviour says why; and a provider-adapter lane goes with a provider-boundary
 * effect.
 */
import { RuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import type { Json, JsonRecord } from "../types.js";

type Lane =
  | "manual"
  | "graph"
  | "agent_task"
  | "native_capability"
  | "domain_module"
  | "cli_tool"
  | "provider_adapter";

/** Who the package is and how it is seen. */
export interface IdentityDecision {
  current_name?: string | null;
  proposed_name?: string | null;
  action: "create" | "keep" | "rename" | "internalize";
  visibility: "public" | "internal";
  rationale: string;
}

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
  resource_budget: {
    max_files: number;
    max_executable_lines: number;
    max_fanout: number;
    max_process_spawns: number;
    network_allowed: boolean;
  };
  deletions: string[];
  proof_plan: Array<{ name: string; kind: string; expected: string }>;
}

/** Refusal of one field of a tool's input. */
export function refuse(tool: string, path: string, message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${tool}: ${message}`, { path });
}

const OPERATOR_PROOFS = [
  "selection_trial",
  "standalone_operator_journey",
  "composed_operator_journey",
] as const;

function present(value: Json | undefined): boolean {
  return value !== undefined && value !== null;
}

function implementsPackage(a: ArchitectureDecision): boolean {
  return a.disposition === "build" || a.disposition === "extend_existing";
}

function admitCompleteness(tool: string, a: ArchitectureDecision, path: string): void {
  if (implementsPackage(a) && (a.required_behaviors.length === 0 || a.proof_plan.length === 0)) {
    throw refuse(
      tool,
      `${path}.required_behaviors`,
      "build and extension architectures require behaviors and a proof plan",
    );
  }
  const missing = a.native_reuse.missing_capabilities;
  if (a.disposition === "needs_core" && missing.length === 0) {
    throw refuse(
      tool,
      `${path}.native_reuse.missing_capabilities`,
      "a needs_core architecture must name at least one missing native capability",
    );
  }
  if (a.disposition !== "needs_core" && missing.length > 0) {
    throw refuse(
      tool,
      `${path}.disposition`,
      "missing native capabilities require a needs_core disposition",
    );
  }
}

function admitIdentity(tool: string, a: ArchitectureDecision, path: string): IdentityDecision {
  const identity = a.identity as unknown as IdentityDecision | null | undefined;
  if (identity === undefined || identity === null) {
    throw refuse(
      tool,
      `${path}.identity`,
      "build and extension architectures require an identity decision",
    );
  }
  const current = identity.current_name ?? undefined;
  const proposed = identity.proposed_name ?? undefined;
  const fits =
    (a.disposition === "build" &&
      identity.action === "create" &&
      current === undefined &&
      proposed !== undefined) ||
    (a.disposition === "extend_existing" &&
      (identity.action === "keep" || identity.action === "internalize") &&
      current !== undefined &&
      current === proposed) ||
    (a.disposition === "extend_existing" &&
      identity.action === "rename" &&
      current !== undefined &&
      proposed !== undefined &&
      current !== proposed);
  if (!fits) {
    throw refuse(
      tool,
      `${path}.identity.action`,
      "identity action, current_name and proposed_name conflict with the architecture disposition",
    );
  }
  if (identity.action === "internalize" && identity.visibility !== "internal") {
    throw refuse(
      tool,
      `${path}.identity.visibility`,
      "an internalize identity decision must select internal visibility",
    );
  }
  return identity;
}

function listOf(record: Json | undefined, key: string): Json[] {
  const value =
    record !== null && typeof record === "object" && !Array.isArray(record)
      ? record[key]
      : undefined;
  return Array.isArray(value) ? value : [];
}

function admitPublicUse(tool: string, a: ArchitectureDecision, path: string): void {
  if (!present(a.direct_use)) {
    throw refuse(tool, `${path}.direct_use`, "public architectures require a direct_use contract");
  }
  if (!present(a.chain_use)) {
    throw refuse(tool, `${path}.chain_use`, "public architectures require a chain_use contract");
  }
  if (
    listOf(a.direct_use, "trigger_requests").length === 0 ||
    listOf(a.direct_use, "non_trigger_requests").length === 0
  ) {
    throw refuse(
      tool,
      `${path}.direct_use`,
      "public direct_use requires at least one trigger request and one non-trigger request",
    );
  }
  if (
    listOf(a.chain_use, "accepted_inputs").length === 0 ||
    listOf(a.chain_use, "must_not_repeat").length === 0
  ) {
    throw refuse(
      tool,
      `${path}.chain_use`,
      "public chain_use requires accepted inputs and work that must not repeat",
    );
  }
  const kinds = new Set(a.proof_plan.map((p) => p.kind));
  if (!OPERATOR_PROOFS.every((kind) => kinds.has(kind))) {
    throw refuse(
      tool,
      `${path}.proof_plan`,
      "public architectures require selection_trial, standalone_operator_journey and composed_operator_journey proofs",
    );
  }
}

function admitOperatorContract(tool: string, a: ArchitectureDecision, path: string): void {
  if (!implementsPackage(a)) {
    for (const key of ["identity", "direct_use", "chain_use"] as const) {
      if (present(a[key])) {
        throw refuse(
          tool,
          `${path}.${key}`,
          "no_skill and needs_core architectures must not invent a package identity or operator contract",
        );
      }
    }
    return;
  }
  const identity = admitIdentity(tool, a, path);
  if (identity.visibility === "public") {
    admitPublicUse(tool, a, path);
    return;
  }
  if (present(a.direct_use)) {
    throw refuse(
      tool,
      `${path}.direct_use`,
      "internal architectures must not declare a public direct_use trigger contract",
    );
  }
  if (identity.action === "internalize" && !present(a.chain_use)) {
    throw refuse(
      tool,
      `${path}.chain_use`,
      "internalized architectures require a chain_use contract for their runtime owner",
    );
  }
}

function admitLanes(tool: string, a: ArchitectureDecision, path: string): void {
  const inspected = new Set(a.native_reuse.inspected_capabilities);
  const selected = new Set(a.native_reuse.selected_capabilities);
  for (const name of selected) {
    if (!inspected.has(name)) {
      throw refuse(
        tool,
        `${path}.native_reuse.selected_capabilities`,
        `selected capability ${JSON.stringify(name)} is not among inspected_capabilities`,
      );
    }
  }
  a.required_behaviors.forEach((behavior, index) => {
    const at = `${path}.required_behaviors[${index}]`;
    const id = JSON.stringify(behavior.id);
    if (behavior.lane === "domain_module" && behavior.domain_module_justification === undefined) {
      throw refuse(
        tool,
        `${at}.domain_module_justification`,
        `domain-module behavior ${id} requires a justification`,
      );
    }
    if (behavior.lane !== "native_capability") return;
    if (behavior.reuse_ref === undefined) {
      throw refuse(tool, `${at}.reuse_ref`, `native behavior ${id} requires reuse_ref`);
    }
    if (!selected.has(behavior.reuse_ref)) {
      throw refuse(
        tool,
        `${at}.reuse_ref`,
        `native behavior ${id} must reference a selected capability`,
      );
    }
  });
  const providerLane = a.required_behaviors.some((b) => b.lane === "provider_adapter");
  const providerEffect = a.effects.some((e) => e.provider_boundary);
  if (providerLane !== providerEffect) {
    throw refuse(
      tool,
      `${path}.effects`,
      "a provider_adapter behavior and a provider_boundary effect must be declared together",
    );
  }
}

/** Throws INPUT_INVALID (naming the field under `path`) when a decision contradicts itself. */
export function admitArchitecture(
  tool: string,
  architecture: ArchitectureDecision,
  path = "architecture",
): void {
  admitCompleteness(tool, architecture, path);
  admitOperatorContract(tool, architecture, path);
  admitLanes(tool, architecture, path);
}

/**
 * The decision as it is digested and echoed: optional parts given as `null` are the same
 * decision as optional parts left out, so both forms bind to one digest.
 */
export function normalizeArchitecture(architecture: ArchitectureDecision): ArchitectureDecision {
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(architecture)) {
    if (value === null) continue;
    if (key === "identity" && typeof value === "object" && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
    } else {
      out[key] = value;
    }
  }
  return out as ArchitectureDecision;
}

/**
 * The digest binding a base package digest to one decision: sha256 over the
 * runx.stable-json.v1 canonical JSON of `{base_digest, architecture}` (normalized).
 */
export function architectureDigest(baseDigest: string, architecture: ArchitectureDecision): string {
  return hashCanonical({
    base_digest: baseDigest,
    architecture: normalizeArchitecture(architecture),
  });
}
