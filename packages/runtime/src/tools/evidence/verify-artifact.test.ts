import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { validateToolsEvidenceVerifyArtifactOutput } from "../../generated/validate-tools-evidence-verify-artifact.output.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord } from "../types.js";
import { evidenceVerifyArtifactTool } from "./verify-artifact.js";

const sha = (text: string): string =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
const ctx = makeToolContext({ scopes: ["runx:evidence:read"] });
const SOURCE = sha("source one");
const CONTENT = sha("<p>source one</p>");
const CONTEXT = sha("brand context");

async function verify(input: JsonRecord): Promise<JsonRecord> {
  const output = successOutput(await evidenceVerifyArtifactTool.execute(input, ctx));
  expect(validateToolsEvidenceVerifyArtifactOutput(output)).toBe(true);
  return output;
}

const codes = (output: JsonRecord): string[] =>
  ((output.verification as JsonRecord).findings as JsonRecord[]).map((f) => f.code as string);

/** A candidate that passes every check of {@link passingInput}. */
const passingInput = (): JsonRecord => ({
  candidate: { decision: "ready", summary: "Source one says so.", delivery_status: "not_sent" },
  source_digests: [SOURCE],
  source_records: [{ source_digest: SOURCE, content_digest: CONTENT }],
  claim_bindings: [
    { claim: "Source one says so.", source_digest: SOURCE, content_digest: CONTENT },
  ],
  context_requirements: [{ packet_digest: CONTEXT, rules: ["plain-language"] }],
  context_bindings: [{ packet_digest: CONTEXT, applied_rules: ["plain-language"] }],
  required_paths: ["summary"],
});

describe("evidence.verify_artifact", () => {
  it("releases a supported candidate under verified_artifact with a pass validation", async () => {
    const output = await verify(passingInput());
    expect(output.verification).toEqual({
      status: "pass",
      findings: [],
      admitted_source_digests: [SOURCE],
      admitted_context_digests: [CONTEXT],
    });
    expect(output.verified_artifact).toEqual({
      decision: "ready",
      summary: "Source one says so.",
      delivery_status: "not_sent",
      validation: { status: "pass", findings: [] },
    });
  });

  it("lays authoritative fields and bindings over the candidate under artifact_name", async () => {
    const output = await verify({
      ...passingInput(),
      artifact_name: "brief",
      authoritative_fields: { summary: "fixed", owner: "ops" },
      authoritative_source: { account: { id: "acct-1" } },
      authoritative_bindings: [{ target_path: "identity.account_id", source_path: "account.id" }],
    });
    expect(output.verified_artifact).toBeUndefined();
    expect(output.brief).toMatchObject({
      summary: "fixed",
      owner: "ops",
      identity: { account_id: "acct-1" },
      validation: { status: "pass" },
    });
  });

  it("refuses an unsupported external effect and emits only the fallback with the blocked decision", async () => {
    const output = await verify({
      ...passingInput(),
      candidate: {
        decision: "ready",
        summary: "Sent.",
        sent: true,
        delivery: { provider_id: "msg-77", publication_status: "not_published" },
      },
      fallback_artifact: { decision: "ready", summary: "", objective: "" },
      fallback_source: { objective: "tell the customer" },
      fallback_bindings: [{ target_path: "objective", source_path: "objective" }],
    });
    const findings = [
      {
        code: "artifact.effect.proofless",
        message: "provider_id is not allowed on an evidence-only artifact",
        path: "candidate.delivery.provider_id",
      },
      {
        code: "artifact.effect.unsupported",
        message: "sent claims an external effect without provider evidence",
        path: "candidate.sent",
      },
    ];
    expect(output.verification).toMatchObject({ status: "fail", findings });
    expect(output.verified_artifact).toEqual({
      decision: "needs_more_evidence",
      summary: "",
      objective: "tell the customer",
      validation: { status: "fail", findings },
    });
  });

  it("allows effect keys that say nothing happened, and skips the effect check when not forbidden", async () => {
    const quiet = await verify({
      ...passingInput(),
      candidate: {
        decision: "ready",
        summary: "s",
        provider_status: "not_called",
        receipt_status: "pending_parent_receipt",
        items: [{ published: false, delivery_ref: "", effect_receipt: null }],
      },
    });
    expect(codes(quiet)).toEqual([]);
    const loud = { decision: "ready", summary: "s", published: true };
    expect(codes(await verify({ ...passingInput(), candidate: loud }))).toEqual([
      "artifact.effect.unsupported",
    ]);
    expect(
      codes(await verify({ ...passingInput(), candidate: loud, forbid_external_effects: false })),
    ).toEqual([]);
  });

  it("requires the ready decision and at least one claim by default", async () => {
    const output = await verify({ candidate: { decision: "draft" } });
    expect(output.verification).toEqual({
      status: "fail",
      findings: [
        { code: "artifact.decision.not_ready", message: "candidate decision is not ready" },
        {
          code: "artifact.claims.empty",
          message: "ready artifact requires at least one evidence-bound claim",
        },
      ],
      admitted_source_digests: [],
      admitted_context_digests: [],
    });
    // No fallback: nothing is released.
    expect(Object.keys(output)).toEqual(["verification"]);
    const relaxed = await verify({
      candidate: { decision: "go" },
      ready_decision: "go",
      require_claim_bindings: false,
    });
    expect(codes(relaxed)).toEqual([]);
  });

  it("refuses claims and references that cite unadmitted digests or the wrong content", async () => {
    const output = await verify({
      ...passingInput(),
      claim_bindings: [
        { claim: "", source_digests: [SOURCE, sha("invented")] },
        { claim: "ok", source_digest: SOURCE, content_digest: sha("other content") },
        { claim: "no digests" },
      ],
      reference_bindings: [{ source_digests: [sha("elsewhere")] }, { source_digests: [SOURCE] }],
    });
    const findings = (output.verification as JsonRecord).findings as JsonRecord[];
    expect(findings.map((f) => [f.code, f.path])).toEqual([
      ["artifact.claim.empty", "claim_bindings[0].claim"],
      ["artifact.claim.unbound", "claim_bindings[0].source_digests"],
      ["artifact.content_digest.mismatch", "claim_bindings[1].content_digest"],
      ["artifact.claim.unbound", "claim_bindings[2].source_digests"],
      ["artifact.reference.unbound", "reference_bindings[0].source_digests"],
    ]);
  });

  it("admits digests from source_records, ignoring malformed ones", async () => {
    const output = await verify({
      ...passingInput(),
      source_digests: [" " + SOURCE + " ", "sha256:NOTHEX", SOURCE],
      source_records: [{ source_digest: sha("two") }, { source_digest: "md5:1" }],
    });
    expect((output.verification as JsonRecord).admitted_source_digests).toEqual([
      SOURCE,
      sha("two"),
    ]);
  });

  it("checks required paths, required values and identity bindings", async () => {
    const output = await verify({
      ...passingInput(),
      candidate: { decision: "ready", summary: " ", account: { id: "acct-2" }, tier: "gold" },
      required_paths: ["", "summary", "missing.path", "tier"],
      required_values: [
        { path: "tier", value: "gold" },
        { path: "account.id", value: "acct-1" },
      ],
      identity_source: { account: { id: "acct-1" } },
      required_value_bindings: [{ candidate_path: "account.id", source_path: "account.id" }],
    });
    const findings = (output.verification as JsonRecord).findings as JsonRecord[];
    expect(findings).toEqual([
      {
        code: "artifact.required.missing",
        message: "required candidate field is empty",
        path: "required_paths[0]",
      },
      {
        code: "artifact.required.missing",
        message: "required candidate field is empty",
        path: "required_paths[1]",
      },
      {
        code: "artifact.identity.changed",
        message: "candidate changed an authoritative input value",
        path: "required_values[1]",
      },
      {
        code: "artifact.identity.changed",
        message: "candidate changed an authoritative source value",
        path: "required_value_bindings[0]",
      },
    ]);
  });

  it("refuses unknown contexts, foreign rules and unbound admitted contexts", async () => {
    const other = sha("taste context");
    const output = await verify({
      ...passingInput(),
      context_requirements: [
        { packet_digest: CONTEXT, rules: ["plain-language"] },
        { packet_digest: other, rules: ["short"] },
      ],
      context_bindings: [
        { packet_digest: CONTEXT, applied_rules: ["plain-language", "invented"] },
        { packet_digest: sha("unknown"), applied_rules: ["x"] },
      ],
    });
    const findings = (output.verification as JsonRecord).findings as JsonRecord[];
    expect(findings.map((f) => [f.code, f.path])).toEqual([
      ["artifact.context.unbound", "context_bindings[0].applied_rules"],
      ["artifact.context.unknown", "context_bindings[1].packet_digest"],
      ["artifact.context.missing", "context_bindings"],
    ]);
    const lenient = await verify({
      ...passingInput(),
      context_bindings: [],
      require_all_contexts: false,
    });
    expect(codes(lenient)).toEqual([]);
  });

  it("fails with INPUT_INVALID on a reserved or unsafe artifact_name and on a dangling binding", async () => {
    for (const name of ["verification", "1st", "a.b", "x".repeat(65)]) {
      expect(
        failureCode(
          await evidenceVerifyArtifactTool.execute({ ...passingInput(), artifact_name: name }, ctx),
        ),
      ).toBe("INPUT_INVALID");
    }
    const dangling = await evidenceVerifyArtifactTool.execute(
      {
        candidate: {},
        fallback_artifact: {},
        fallback_bindings: [{ target_path: "a", source_path: "nope" }],
      },
      ctx,
    );
    expect(failureCode(dangling)).toBe("INPUT_INVALID");
    expect(dangling.status === "failure" && dangling.summary).toContain("fallback_bindings[0]");
    expect(failureCode(await evidenceVerifyArtifactTool.execute({}, ctx))).toBe("INPUT_INVALID");
    expect(
      failureCode(await evidenceVerifyArtifactTool.execute({ candidate: {}, surprise: true }, ctx)),
    ).toBe("INPUT_INVALID");
  });
});
