import { describe, expect, it } from "vitest";
import { validateToolsSandboxPlanOutput } from "../../generated/validate-tools-sandbox-plan.output.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type { JsonRecord } from "../types.js";
import { admitSandbox, isReservedRunxSandboxEnvName } from "./admission.js";
import { sandboxPlanTool } from "./plan.js";

const ctx = makeToolContext();
const DIGEST = `sha256:${"a".repeat(64)}`;
const AS_OF = "2026-03-10T00:00:00Z";

const requirements = (extra: JsonRecord = {}): JsonRecord => ({
  source_ref: "https://example.test/requirements.json",
  source_digest: DIGEST,
  observed_at: "2026-03-01T00:00:00Z",
  ...extra,
});

async function plan(input: JsonRecord): Promise<JsonRecord> {
  const data = successData(await sandboxPlanTool.execute(input, ctx));
  expect(validateToolsSandboxPlanOutput(data)).toBe(true);
  return data;
}

const codes = (profile: JsonRecord): string[] =>
  ((profile.validation as JsonRecord).findings as JsonRecord[]).map((f) => f.code as string);

describe("sandbox.plan", () => {
  it("compiles fresh, read-only requirements into a ready readonly declaration", async () => {
    const profile = await plan({
      workload: { skill_ref: "acme/report@1.0.0", class: "batch", requirements: requirements() },
      as_of: AS_OF,
    });
    expect(profile).toMatchObject({
      schema: "runx.hardening.v1",
      decision: "ready",
      workload: {
        ref_form: "skill_ref",
        image_digest: "",
        skill_ref: "acme/report@1.0.0",
        class: "batch",
      },
      declaration: {
        profile: "readonly",
        cwd_policy: "skill-directory",
        env_allowlist: null,
        network: false,
        writable_paths: [],
        require_enforcement: true,
      },
      source_evidence: {
        source_ref: "https://example.test/requirements.json",
        source_digest: DIGEST,
        observed_at: "2026-03-01T00:00:00Z",
        provenance: "caller_supplied_source_digest",
      },
      admission: { status: "allow", reasons: ["sandbox profile 'readonly' admitted"] },
      residual_risk: { level: "low" },
      applied: false,
      validation: { status: "pass", findings: [] },
    });
    expect(profile.unsupported_controls).toHaveLength(4);
  });

  it("chooses workspace-write for writable paths (sorted, deduplicated) and network for network", async () => {
    const write = await plan({
      workload: {
        image_digest: DIGEST,
        requirements: requirements({
          writable_paths: ["out", "build", "out"],
          env_allowlist: ["PATH"],
        }),
      },
      as_of: AS_OF,
    });
    expect(write).toMatchObject({
      decision: "ready",
      declaration: {
        profile: "workspace-write",
        writable_paths: ["build", "out"],
        env_allowlist: ["PATH"],
      },
      residual_risk: { level: "medium" },
    });
    const net = await plan({
      workload: { image_digest: DIGEST, requirements: requirements({ network: true }) },
      as_of: AS_OF,
    });
    expect(net).toMatchObject({
      decision: "ready",
      declaration: { profile: "network", network: true },
    });
  });

  it("needs more evidence for a missing identity, provenance or a stale requirement", async () => {
    const profile = await plan({
      workload: { requirements: { observed_at: "2025-01-01T00:00:00Z" } },
      as_of: AS_OF,
    });
    expect(profile.decision).toBe("needs_more_evidence");
    expect(codes(profile)).toEqual([
      "sandbox.workload.identity",
      "sandbox.requirements.provenance",
      "sandbox.requirements.stale",
    ]);
    const future = await plan({
      workload: {
        skill_ref: "a",
        requirements: requirements({ observed_at: "2026-04-01T00:00:00Z" }),
      },
      as_of: AS_OF,
    });
    expect(codes(future)).toEqual(["sandbox.requirements.stale"]);
    const both = await plan({
      workload: { skill_ref: "a", image_digest: "sha256:XYZ", requirements: requirements() },
      as_of: AS_OF,
    });
    expect(codes(both)).toEqual(["sandbox.workload.identity", "sandbox.workload.digest"]);
  });

  it("reports bad times and the max_age_days range", async () => {
    const profile = await plan({
      workload: { skill_ref: "a", requirements: requirements({ observed_at: "yesterday" }) },
      as_of: "2026-02-31T00:00:00Z",
      max_age_days: 0,
    });
    expect(codes(profile)).toEqual([
      "sandbox.time.invalid",
      "sandbox.requirements.max_age",
      "sandbox.time.invalid",
    ]);
    const untimed = requirements();
    delete untimed.observed_at;
    const missing = await plan({
      workload: { skill_ref: "a", requirements: untimed },
      as_of: AS_OF,
    });
    expect(codes(missing)).toEqual(["sandbox.time.missing"]);
  });

  it("refuses what the baseline forbids and what admission denies", async () => {
    const baseline = await plan({
      workload: {
        skill_ref: "a",
        requirements: requirements({ network: true, env_allowlist: ["HOME"] }),
      },
      as_of: AS_OF,
      baseline: { network_allowed: false, allowed_env: ["PATH"] },
    });
    expect(baseline.decision).toBe("refused");
    expect(codes(baseline)).toEqual(["sandbox.baseline.network", "sandbox.baseline.env"]);
    const reserved = await plan({
      workload: {
        skill_ref: "a",
        requirements: requirements({ env_allowlist: ["RUNX_AGENT_API_KEY"] }),
      },
      as_of: AS_OF,
    });
    expect(reserved).toMatchObject({ decision: "refused", admission: { status: "deny" } });
    expect(codes(reserved)).toEqual(["sandbox.admission.denied"]);
    const unsafe = await plan({
      workload: { skill_ref: "a", requirements: requirements({ writable_paths: ["../up"] }) },
      as_of: AS_OF,
    });
    expect(unsafe.decision).toBe("refused");
  });

  it("calls network with writes, or syscall/egress/capability controls, an unsupported runtime shape", async () => {
    const mixed = await plan({
      workload: {
        skill_ref: "a",
        requirements: requirements({ network: true, writable_paths: ["out"] }),
      },
      as_of: AS_OF,
    });
    expect(mixed.decision).toBe("unsupported_runtime_shape");
    const controls = await plan({
      workload: { skill_ref: "a", requirements: requirements({ allowed_syscalls: ["read"] }) },
      as_of: AS_OF,
    });
    expect(controls.decision).toBe("unsupported_runtime_shape");
    expect(codes(controls)).toEqual(["sandbox.control.unsupported"]);
  });

  it("fails with INPUT_INVALID for fields of the wrong type", async () => {
    const wrongTypes: JsonRecord[] = [
      { network: "yes" },
      { writable_paths: "out" },
      { env_allowlist: [""] },
    ];
    for (const req of wrongTypes) {
      const result = await sandboxPlanTool.execute(
        { workload: { skill_ref: "a", requirements: requirements(req) }, as_of: AS_OF },
        ctx,
      );
      expect(failureCode(result)).toBe("INPUT_INVALID");
    }
    expect(
      failureCode(
        await sandboxPlanTool.execute({ workload: { requirements: 3 }, as_of: AS_OF }, ctx),
      ),
    ).toBe("INPUT_INVALID");
    expect(failureCode(await sandboxPlanTool.execute({ workload: {} }, ctx))).toBe("INPUT_INVALID");
  });
});

describe("sandbox admission", () => {
  it("needs approval for unrestricted-local-dev and recognises reserved runx variables", () => {
    expect(admitSandbox({ profile: "unrestricted-local-dev" }).status).toBe("approval_required");
    expect(
      admitSandbox({ profile: "unrestricted-local-dev" }, { approvedEscalation: true }).status,
    ).toBe("allow");
    expect(isReservedRunxSandboxEnvName("RUNX_RECEIPT_SIGN_ED25519_SEED_BASE64")).toBe(true);
    expect(isReservedRunxSandboxEnvName("RUNX_GIT_ASKPASS_TOKEN")).toBe(true);
    expect(isReservedRunxSandboxEnvName("RUNX_CWD")).toBe(false);
    expect(isReservedRunxSandboxEnvName("PATH")).toBe(false);
  });
});
