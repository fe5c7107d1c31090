import { describe, expect, it } from "vitest";
import type { RuntimeError } from "../errors.js";
import { buildGraphReceipt, buildSkillReceipt } from "./build.js";
import type { SkillReceiptFacts } from "./build.js";
import { generateEd25519Seed } from "./ed25519.js";
import type { Receipt, Reference } from "./model.js";
import { sealReceipt } from "./seal.js";
import type { UnsealedReceipt } from "./seal.js";
import { ed25519Signer, localDevelopmentSigner } from "./signer.js";
import { verifyReceiptTree, verifyTree } from "./tree.js";
import { localDevelopmentPolicy, productionPolicy } from "./verifier.js";
import { receiptStatus } from "./verify.js";

const policy = localDevelopmentPolicy();
const local = localDevelopmentSigner();
const AT = "2026-05-18T00:00:00Z";

function step(name: string, extra: Partial<SkillReceiptFacts> = {}): Receipt {
  const facts: SkillReceiptFacts = {
    name,
    step: "default",
    createdAt: AT,
    disposition: "closed",
    reasonCode: "process_closed",
    ...extra,
  };
  return sealReceipt(buildSkillReceipt(facts), local);
}

/** Seals a parent whose lineage lists exactly `children` (refs may be edited first). */
function parentOf(name: string, children: readonly Reference[]): Receipt {
  const unsealed: UnsealedReceipt = buildGraphReceipt({ name, createdAt: AT, children: [] });
  unsealed.lineage = { children: [...children], sync: [] };
  return sealReceipt(unsealed, local);
}

function ref(child: Receipt): Reference {
  return { type: "receipt", uri: `runx:receipt:${child.id}`, locator: child.digest };
}

function codes(findings: readonly { code: string }[]): string[] {
  return findings.map((finding) => finding.code);
}

describe("verifyReceiptTree", () => {
  const a = step("a");
  const b = step("b");
  const parent = sealReceipt(
    buildGraphReceipt({ name: "graph", createdAt: AT, children: [a, b] }),
    local,
  );

  it("accepts a parent with two children", () => {
    expect(verifyReceiptTree(parent, [a, b], { policy })).toEqual({ valid: true, findings: [] });
  });

  it("names the child whose body changed after the parent committed its digest", () => {
    // Lineage is outside the id: a resealed child keeps its id but gets a new digest.
    const edited = sealReceipt(
      { ...b, lineage: { children: [], sync: [], previous: ref(a) } },
      local,
    );
    expect(edited.id).toBe(b.id);
    const report = verifyReceiptTree(parent, [a, edited], { policy });
    expect(report.valid).toBe(false);
    expect(report.findings).toEqual([
      {
        code: "child_receipt_digest_mismatch",
        path: `receipt[${b.id}].locator`,
        message:
          "strict tree proof requires child receipt refs to carry the exact child receipt digest",
      },
    ]);
  });

  it("reports the proof failure of a child tampered without resealing", () => {
    const tampered: Receipt = { ...b, seal: { ...b.seal, summary: "rewritten" } };
    const report = verifyReceiptTree(parent, [a, tampered], { policy });
    expect(report.findings).toContainEqual(
      expect.objectContaining({ code: "seal_digest_mismatch", path: `receipt[${b.id}].digest` }),
    );
  });

  it("reports a missing child", () => {
    const report = verifyReceiptTree(parent, [a], { policy });
    expect(report.findings).toEqual([
      expect.objectContaining({ code: "child_receipt_missing", path: "lineage.children[1]" }),
    ]);
  });

  it("collapses identical repeated children but flags two bodies under one id", () => {
    expect(verifyReceiptTree(parent, [a, b, { ...b }], { policy }).valid).toBe(true);
    const other = sealReceipt({ ...b, metadata: { note: "different bytes" } }, local);
    expect(other.id).toBe(b.id);
    const report = verifyReceiptTree(parent, [a, b, other], { policy });
    // Neither body is reached through the ambiguous ref, so both are also orphans.
    expect(codes(report.findings)).toEqual([
      "duplicate_child_receipt",
      "child_receipt_ambiguous",
      "orphan_child_receipt",
      "orphan_child_receipt",
    ]);
  });

  it("flags malformed child refs, orphans and unreachable supplied receipts", () => {
    const malformed = parentOf("m", [{ type: "receipt", uri: a.id, locator: a.digest }]);
    const report = verifyReceiptTree(malformed, [a], { policy });
    expect(codes(report.findings)).toEqual(["child_receipt_ref_malformed", "orphan_child_receipt"]);
    expect(report.findings[1]!.path).toBe(`receipt[${a.id}].id`);
  });

  it("enforces depth and breadth limits", () => {
    const middle = parentOf("middle", [ref(a)]);
    const top = parentOf("top", [ref(middle)]);
    const deep = verifyReceiptTree(top, [middle, a], { policy, config: { maxDepth: 1 } });
    expect(codes(deep.findings)).toContain("child_receipt_depth_limit");
    const wide = verifyReceiptTree(parent, [a, b], { policy, config: { maxBreadth: 1 } });
    expect(codes(wide.findings)).toEqual(["child_receipt_breadth_limit", "orphan_child_receipt"]);
  });

  it("detects a child that points back at an ancestor", () => {
    // Ids exclude lineage, so two receipts can list each other after sealing.
    const first = step("first");
    const second = step("second");
    const firstLooped = sealReceipt(
      { ...first, lineage: { children: [ref(second)], sync: [] } },
      local,
    );
    const secondLooped = sealReceipt(
      { ...second, lineage: { children: [ref(first)], sync: [] } },
      local,
    );
    const root = parentOf("root", [ref(firstLooped)]);
    const report = verifyReceiptTree(root, [firstLooped, secondLooped], { policy });
    expect(codes(report.findings)).toContain("child_receipt_cycle");
  });

  it("checks parent links when they are present or required", () => {
    const linked = sealReceipt(
      {
        ...a,
        lineage: { children: [], sync: [], parent: { type: "receipt", uri: "runx:receipt:x" } },
      },
      local,
    );
    const root = parentOf("p", [ref(linked)]);
    expect(codes(verifyReceiptTree(root, [linked], { policy }).findings)).toEqual([
      "child_receipt_parent_mismatch",
    ]);
    const strict = verifyReceiptTree(parent, [a, b], {
      policy,
      config: { requireParentLinks: true },
    });
    expect(codes(strict.findings)).toEqual([
      "child_receipt_parent_mismatch",
      "child_receipt_parent_mismatch",
    ]);
  });
});

describe("verifyTree", () => {
  const a = step("a");
  const b = step("b");
  const parent = sealReceipt(
    buildGraphReceipt({ name: "graph", createdAt: AT, children: [a, b] }),
    local,
  );
  const loner = step("loner");

  it("groups a receipt set into trees rooted at uncommitted receipts", () => {
    const reports = verifyTree([b, loner, a, parent], { policy });
    expect(reports).toHaveLength(2);
    const graph = reports.find((report) => report.root_receipt_id === parent.id);
    expect(graph).toMatchObject({
      receipt_count: 3,
      parent_missing: null,
      valid: true,
      findings: [],
    });
    const single = reports.find((report) => report.root_receipt_id === loner.id);
    expect(single).toMatchObject({ receipt_count: 1, valid: true });
  });

  it("selects the tree that contains a given receipt id", () => {
    const [report] = verifyTree([b, loner, a, parent], { policy, rootId: a.id });
    expect(report?.root_receipt_id).toBe(parent.id);
    try {
      verifyTree([a], { policy, rootId: "sha256:nope" });
      expect.unreachable();
    } catch (error) {
      expect((error as RuntimeError).code).toBe("RECEIPT_NOT_FOUND");
    }
  });

  it("marks a tree whose root names a parent outside the set as incomplete", () => {
    const orphaned = sealReceipt(
      {
        ...loner,
        lineage: {
          children: [],
          sync: [],
          parent: { type: "receipt", uri: "runx:receipt:sha256:gone" },
        },
      },
      local,
    );
    const [report] = verifyTree([orphaned], { policy });
    expect(report).toMatchObject({ parent_missing: "sha256:gone", valid: false, findings: [] });
  });

  it("reports an edited child against its parent's tree", () => {
    const edited = sealReceipt(
      { ...b, lineage: { children: [], sync: [], previous: ref(a) } },
      local,
    );
    const [report] = verifyTree([parent, a, edited], { policy });
    expect(report?.valid).toBe(false);
    expect(codes(report?.findings ?? [])).toEqual(["child_receipt_digest_mismatch"]);
  });
});

describe("receiptStatus", () => {
  it("reads local receipts as unverified and production ones as verified", () => {
    const localReceipt = step("local");
    expect(receiptStatus(localReceipt, localDevelopmentPolicy())).toBe("unverified");
    const signer = ed25519Signer({ kid: "k", issuerType: "hosted", seed: generateEd25519Seed() });
    const signed = sealReceipt(
      buildSkillReceipt({
        name: "p",
        step: "s",
        createdAt: AT,
        disposition: "closed",
        reasonCode: "process_closed",
      }),
      signer,
    );
    expect(receiptStatus(signed, productionPolicy(signer.verifier))).toBe("verified");
    expect(receiptStatus(signed, productionPolicy())).toBe("unverified");
    // A store read in local-development mode still reports a key-checked signature as verified.
    expect(receiptStatus(signed, localDevelopmentPolicy(signer.verifier))).toBe("verified");
    expect(receiptStatus(localReceipt, localDevelopmentPolicy(signer.verifier))).toBe("unverified");
    expect(receiptStatus(localReceipt, productionPolicy(signer.verifier))).toBe("invalid");
    expect(
      receiptStatus(
        { ...signed, seal: { ...signed.seal, summary: "x" } },
        productionPolicy(signer.verifier),
      ),
    ).toBe("invalid");
    expect(receiptStatus({ ...localReceipt, id: signed.id }, localDevelopmentPolicy())).toBe(
      "invalid",
    );
  });
});
