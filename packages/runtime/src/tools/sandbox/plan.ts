/**
 * `sandbox.plan`: compiles a workload's source-bound runtime requirements into the narrowest
 * sandbox declaration runx's admission would accept, and reports it as a hardening profile
 * (`runx.hardening.v1`, named output `hardening_profile`) without applying anything
 * (`applied: false`). The decision is `ready` only when there is no finding and admission
 * allows the declaration; a shape the declaration cannot express is
 * `unsupported_runtime_shape`, a denial or baseline breach `refused`, anything else
 * `needs_more_evidence`.
 */
import inputSchema from "../../../schemas/tools/sandbox/plan.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/sandbox/plan.output.schema.json" with { type: "json" };
import { validateToolsSandboxPlanInput } from "../../generated/validate-tools-sandbox-plan.input.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import type { JsonRecord, NativeTool } from "../types.js";
import { admitSandbox, normalizeSandbox, type SandboxDeclaration } from "./admission.js";
import {
  buildDeclaration,
  inspectIdentity,
  inspectSourceEvidence,
  optionalObject,
  type PlanFinding,
} from "./requirements.js";

/** `sandbox.plan` input after schema validation. */
export interface SandboxPlanInput {
  workload: JsonRecord;
  as_of: string;
  max_age_days?: number;
  baseline?: JsonRecord;
}

/** Controls no runx sandbox declaration governs; always listed so nobody assumes them. */
export const UNSUPPORTED_CONTROLS = [
  "seccomp syscall policy",
  "host egress allowlist",
  "Linux capability policy",
  "CPU and memory limits",
];

function assess(
  declaration: SandboxDeclaration,
  unsupported: readonly string[],
  findings: PlanFinding[],
): { decision: string; admission: JsonRecord; residual: string } {
  const admission = admitSandbox(declaration);
  if (admission.status !== "allow") {
    for (const reason of admission.reasons) {
      findings.push({ code: "sandbox.admission.denied", message: reason });
    }
  }
  const writable = (declaration.writable_paths ?? []).length > 0;
  const unsupportedShape = (declaration.network === true && writable) || unsupported.length > 0;
  const baselineBreach = findings.some((f) => f.code.startsWith("sandbox.baseline."));
  const decision =
    findings.length === 0 && admission.status === "allow"
      ? "ready"
      : unsupportedShape
        ? "unsupported_runtime_shape"
        : admission.status === "deny" || baselineBreach
          ? "refused"
          : "needs_more_evidence";
  return {
    decision,
    admission: { status: admission.status, reasons: admission.reasons },
    residual: declaration.network === true || writable ? "medium" : "low",
  };
}

/** Builds the `hardening_profile` packet (pure). */
export function planSandbox(input: SandboxPlanInput): JsonRecord {
  const requirements = optionalObject(input.workload, "requirements");
  const baseline = input.baseline ?? {};
  const findings: PlanFinding[] = [];
  const workload = inspectIdentity(input.workload, findings);
  const sourceEvidence = inspectSourceEvidence({
    asOf: input.as_of,
    maxAgeDays: input.max_age_days ?? 30,
    requirements,
    findings,
  });
  const { declaration, unsupported } = buildDeclaration(requirements, baseline, findings);
  const { decision, admission, residual } = assess(declaration, unsupported, findings);
  const normalized = normalizeSandbox(declaration);
  return {
    schema: "runx.hardening.v1",
    decision,
    workload,
    declaration: { ...normalized },
    source_evidence: sourceEvidence,
    admission,
    unsupported_controls: [...UNSUPPORTED_CONTROLS],
    residual_risk: {
      level: residual,
      reason:
        "A runx sandbox declaration bounds filesystem writes, environment variables and network access as a whole; syscall filtering, per-host egress, Linux capabilities and resource quotas need a separate runtime boundary.",
    },
    applied: false,
    validation: {
      status: decision === "ready" ? "pass" : "fail",
      findings: findings.map((f) => ({ code: f.code, message: f.message })),
    },
  };
}

/** The `sandbox.plan` tool. */
export const sandboxPlanTool: NativeTool = withNamedOutput(
  defineTool<SandboxPlanInput, JsonRecord>({
    name: "sandbox.plan",
    description: "Compile workload requirements into the narrowest admissible sandbox declaration.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsSandboxPlanInput,
    run(input) {
      const profile = planSandbox(input);
      const { decision, declaration } = profile as {
        decision: string;
        declaration: { profile: string };
      };
      return Promise.resolve({ output: profile, summary: `${decision} (${declaration.profile})` });
    },
  }),
  { name: "hardening_profile", packet: "runx.hardening.v1" },
);
