import { describe, expect, it } from "vitest";
import { hashCanonical } from "../../receipts/canonical.js";
import { createTaintSet } from "../../redaction.js";
import { receiptAttestTool } from "./receipt-attest.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord, ToolContext } from "../types.js";

const ctx = (overrides: Partial<ToolContext> = {}): ToolContext =>
  makeToolContext({ workspaceRoot: "/nonexistent-workspace", ...overrides });

const DIGEST_A = `sha256:${"a".repeat(64)}`;
const DIGEST_B = `sha256:${"b".repeat(64)}`;

function input(overrides: JsonRecord = {}): JsonRecord {
  return {
    action: " Refunded order 7 in the console. ",
    principal: "ops:jordan",
    claim: "Order 7 was refunded.",
    evidence: [
      { ref: "provider:refund:re_1", digest: DIGEST_A, proves: "refund settled" },
      { ref: "approval:ap_2", digest: DIGEST_B, proves: "approval preceded it" },
    ],
    scope: { rely_for: "order 7 reconciliation" },
    ...overrides,
  };
}

async function attest(value: JsonRecord, context = ctx()): Promise<JsonRecord> {
  const envelope = successOutput(await receiptAttestTool.execute(value, context))
    .attestation as JsonRecord;
  expect(Object.keys(envelope)).toEqual(["data"]);
  return envelope.data as JsonRecord;
}

const codes = (data: JsonRecord): string[] =>
  (data.gaps as JsonRecord[]).map((gap) => gap.code as string);

describe("receipt.attest", () => {
  it("is ready to seal a complete claim and digests exactly what it binds", async () => {
    const data = await attest(input());
    expect(data.decision).toBe("ready_to_seal");
    expect(data.action).toBe("Refunded order 7 in the console.");
    expect(data.gaps).toEqual([]);
    expect(data.proof_boundary).toEqual({
      external_action_verified: false,
      provider_status: "not_called",
      external_ledger_status: "not_requested",
      runtime_seal_status: "pending_parent_receipt",
    });
    expect(data.attestation_digest).toBe(
      hashCanonical({
        action: data.action,
        claim: data.claim,
        principal: data.principal,
        evidence_refs: data.evidence_refs,
        scope: data.scope,
      }),
    );
    const other = await attest(input({ claim: "Order 8 was refunded." }));
    expect(other.attestation_digest).not.toBe(data.attestation_digest);
  });

  it("needs an agent when the subject or evidence is missing", async () => {
    const data = await attest({ action: "", principal: " ", claim: "", evidence: [] });
    expect(data.decision).toBe("needs_agent");
    expect(codes(data)).toEqual([
      "attestation.action.missing",
      "attestation.principal.missing",
      "attestation.claim.missing",
      "attestation.evidence.missing",
    ]);
    expect(data.scope).toEqual({});
  });

  it.each([
    [
      "a malformed digest",
      [{ ref: "r:1", digest: "sha256:XYZ", proves: "p" }],
      "attestation.evidence.digest",
    ],
    [
      "an uppercase digest",
      [{ ref: "r:1", digest: `sha256:${"A".repeat(64)}`, proves: "p" }],
      "attestation.evidence.digest",
    ],
    ["a missing proves", [{ ref: "r:1", digest: DIGEST_A }], "attestation.evidence.proves"],
    [
      "a secret-shaped ref",
      [{ ref: "sk-live-abc", digest: DIGEST_A, proves: "p" }],
      "attestation.evidence.ref",
    ],
    [
      "a ref with spaces",
      [{ ref: "a ref", digest: DIGEST_A, proves: "p" }],
      "attestation.evidence.ref",
    ],
    [
      "a raw body field",
      [{ ref: "r:1", digest: DIGEST_A, proves: "p", body: "raw" }],
      "attestation.evidence.raw_fields",
    ],
    ["a non-object item", ["r:1"], "attestation.evidence.object"],
    [
      "a duplicate ref",
      [
        { ref: "r:1", digest: DIGEST_A, proves: "p" },
        { ref: "r:1", digest: DIGEST_B, proves: "q" },
      ],
      "attestation.evidence.duplicate",
    ],
    [
      "a duplicate digest",
      [
        { ref: "r:1", digest: DIGEST_A, proves: "p" },
        { ref: "r:2", digest: DIGEST_A, proves: "q" },
      ],
      "attestation.evidence.duplicate",
    ],
    [
      "more than 100 references",
      Array.from({ length: 101 }, (_, i) => ({
        ref: `r:${i}`,
        digest: `sha256:${i.toString(16).padStart(64, "0")}`,
        proves: "p",
      })),
      "attestation.evidence.limit",
    ],
  ])("needs more evidence for %s", async (_label, evidence, code) => {
    const data = await attest(input({ evidence }));
    expect(data.decision).toBe("needs_more_evidence");
    expect(codes(data)).toContain(code);
  });

  it("refuses overlong subject text and unknown fields", async () => {
    expect(
      failureCode(await receiptAttestTool.execute(input({ claim: "x".repeat(4001) }), ctx())),
    ).toBe("INPUT_INVALID");
    expect(failureCode(await receiptAttestTool.execute(input({ extra: 1 }), ctx()))).toBe(
      "INPUT_INVALID",
    );
    expect(failureCode(await receiptAttestTool.execute(input({ evidence: "r:1" }), ctx()))).toBe(
      "INPUT_INVALID",
    );
  });

  it("refuses credential material Runx delivered and never echoes it", async () => {
    const taint = createTaintSet(["hunter2-delivered-secret"]);
    const result = await receiptAttestTool.execute(
      input({ claim: "password was hunter2-delivered-secret" }),
      ctx({ taint }),
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(JSON.stringify(result)).not.toContain("hunter2-delivered-secret");
  });
});
