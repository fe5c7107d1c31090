import { describe, expect, it } from "vitest";
import { listInput, readFilters, runsHref, toRfc3339 } from "./runs-filter";
import { approvalLines, verificationText } from "./receipt-view";
import { buildInputs, defaultRunner, fieldsOf } from "./skill-form";
import { summaryRows } from "./summary";

describe("start-run form model", () => {
  it("reads input names and typed descriptors", () => {
    expect(fieldsOf(["message"])).toEqual([
      { name: "message", type: null, required: false, description: null },
    ]);
    expect(fieldsOf({ n: { type: "integer", required: true, description: "count" } })).toEqual([
      { name: "n", type: "integer", required: true, description: "count" },
    ]);
    expect(
      defaultRunner([
        { name: "a", default: false },
        { name: "b", default: true },
      ])?.name,
    ).toBe("b");
  });

  it("sends strings as typed, parses typed or JSON fields, names the bad field", () => {
    const fields = fieldsOf({ message: { type: "string" }, n: { type: "integer" }, extra: {} });
    expect(buildInputs(fields, { message: "42", n: "7", extra: "" }, false)).toEqual({
      ok: true,
      inputs: { message: "42", n: 7 },
    });
    expect(buildInputs(fields, { n: "seven" }, false)).toMatchObject({ ok: false, field: "n" });
    expect(buildInputs(fieldsOf(["o"]), { o: '{"a":1}' }, true)).toEqual({
      ok: true,
      inputs: { o: { a: 1 } },
    });
  });
});

describe("run filters", () => {
  it("maps the URL to runs.list and back", () => {
    const f = readFilters({
      status: "sealed",
      skill: "echo",
      from: "2026-01-02T03:04",
      waiting: "1",
      cursor: "c1",
    });
    expect(listInput(f)).toEqual({
      limit: 50,
      status: "sealed",
      skill: "echo",
      from: "2026-01-02T03:04:00Z",
      waitingForApproval: true,
      cursor: "c1",
    });
    expect(runsHref(f, "c2")).toBe(
      "/runs?status=sealed&skill=echo&from=2026-01-02T03%3A04&waiting=1&cursor=c2",
    );
    expect(toRfc3339("2026-01-02")).toBe("2026-01-02T00:00:00Z");
    expect(toRfc3339("2026-01-02T03:04:05+02:00")).toBe("2026-01-02T03:04:05+02:00");
  });
});

describe("approval summary and receipt reading", () => {
  it("lists the known summary fields in order", () => {
    const rows = summaryRows({
      plan_digest: "sha256:p",
      provider: "fixture",
      operation: "record.create",
      target: "t",
      scopes: ["a", "b"],
      payload_digest: "sha256:x",
      amount: { value: 1200, currency: "EUR" },
      other: 1,
    });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["Provider", "fixture"],
      ["Operation", "record.create"],
      ["Target", "t"],
      ["Scopes", "a, b"],
      ["Payload digest", "sha256:x"],
      ["Plan digest", "sha256:p"],
      ["Amount", "1200 EUR"],
    ]);
    expect(summaryRows(null)).toEqual([]);
  });

  it("reads a typed amount and an empty scope list in words", () => {
    const rows = summaryRows({ scopes: [], amount: { units: 1250, unit: "usd_cents" } });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["Scopes", "none"],
      ["Amount", "1250 usd_cents"],
    ]);
  });

  it("reads signed approvals and names the failed check", () => {
    const receipt = {
      authority: {
        terms: [
          {
            term_id: "approval:release-gate",
            approvals: [
              {
                approval_ref: { label: "approve: ship it" },
                approved_by_ref: { uri: "runx:principal:operator:alice", label: "alice" },
                approved_at: "2026-01-01T00:00:00Z",
              },
            ],
          },
        ],
      },
    };
    expect(approvalLines(receipt)).toEqual([
      {
        approver: "alice",
        decision: "approve",
        reason: "ship it",
        at: "2026-01-01T00:00:00Z",
        gate: "release-gate",
      },
    ]);
    expect(verificationText("invalid", "signature_mismatch")).toBe("invalid: signature_mismatch");
    expect(verificationText("verified", null)).toBe("verified");
  });
});
