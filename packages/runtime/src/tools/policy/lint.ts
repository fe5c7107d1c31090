/**
 * The lint verdict `policy.lint` returns (`runx.policy.lint.v1`), as a pure function of one
 * candidate document: read it as an exact `runx.operational_policy.v1` (contract.ts), check
 * its shape, then every semantic rule (rules.ts). A document the reader refuses is one
 * `policy.contract.invalid` finding at `$`; a shape breach is that one finding; neither has a
 * readback. A shape-valid policy gets every semantic finding and the readback of what it
 * admits; it passes only with no finding at all.
 */
import type { Json, JsonRecord } from "../types.js";
import { readOperationalPolicy } from "./contract.js";
import type { OperationalPolicy, TargetRule } from "./contract.js";
import { semanticFindings, shapeFinding } from "./rules.js";
import type { PolicyFinding } from "./rules.js";

/** The packet id of the verdict. */
export const POLICY_LINT_PACKET = "runx.policy.lint.v1";

/** The engine every verdict names, as upstream's native policy lint names itself. */
export const POLICY_ENGINE = "runx policy";

/** A `runx.policy.lint.v1` verdict. */
export interface PolicyLintPacket {
  status: "pass" | "fail";
  engine: typeof POLICY_ENGINE;
  findings: PolicyFinding[];
  readback: JsonRecord | null;
}

function refused(found: PolicyFinding): PolicyLintPacket {
  return { status: "fail", engine: POLICY_ENGINE, findings: [found], readback: null };
}

function targetReadback(policy: OperationalPolicy, target: TargetRule): JsonRecord {
  const route = policy.owner_routes.find((r) => r.route_id === target.default_owner_route);
  const available = target.runner_ids.filter(
    (id) => policy.runners.find((runner) => runner.runner_id === id)?.state === "available",
  );
  return {
    repo: target.repo,
    runner_ids: [...target.runner_ids],
    default_owner_route: target.default_owner_route,
    owner_count: route?.owners.length ?? 0,
    allowed_actions: [...target.allowed_actions],
    scafld_required: target.scafld_required,
    available_runner_count: available.length,
  };
}

/** What a shape-valid policy admits, in upstream's readback fields. */
function readback(policy: OperationalPolicy, findings: PolicyFinding[]): JsonRecord {
  return {
    policy_id: policy.policy_id,
    schema_version: policy.schema_version,
    valid: findings.length === 0,
    findings: findings.map((f) => ({ ...f })),
    sources: policy.sources.map((source) => ({
      source_id: source.source_id,
      provider: source.provider,
      locator_count: source.allowed_locators.length,
      allowed_actions: [...source.allowed_actions],
      source_thread_required: source.source_thread.required,
      publish_mode: source.source_thread.publish_mode,
    })),
    runners: policy.runners.map((runner) => ({
      runner_id: runner.runner_id,
      kind: runner.kind,
      state: runner.state,
      target_repos: [...runner.target_repos],
      allowed_actions: [...runner.allowed_actions],
      scafld_required: runner.scafld_required,
    })),
    targets: policy.targets.map((target) => targetReadback(policy, target)),
    outcomes: { ...policy.outcomes },
    permissions: { ...policy.permissions },
  };
}

/** Lints one candidate `runx.operational_policy.v1` document; never throws for any JSON value. */
export function lintOperationalPolicy(document: Json): PolicyLintPacket {
  const read = readOperationalPolicy(document);
  if (!read.ok) {
    const at = read.pointer === "" ? "/" : read.pointer;
    return refused({
      code: "policy.contract.invalid",
      path: "$",
      message: `policy does not match runx.operational_policy.v1: ${read.reason} at ${at}`,
    });
  }
  const shape = shapeFinding(read.policy);
  if (shape !== undefined) return refused(shape);
  const findings = semanticFindings(read.policy);
  return {
    status: findings.length === 0 ? "pass" : "fail",
    engine: POLICY_ENGINE,
    findings,
    readback: readback(read.policy, findings),
  };
}
