/**
 * Test helpers for receipt-backed payment tools (not for production code): sealed payment
 * receipts shaped like the runtime's step receipts, with a single-use payment authority term
 * and provider proof refs, and a real receipt store in a temp directory behind a lookup.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildSkillReceipt,
  localDevelopmentPolicy,
  localDevelopmentSigner,
  ReceiptStore,
  sealReceipt,
} from "../receipts/index.js";
import type {
  ClosureDisposition,
  Receipt,
  ReceiptSigner,
  Reference,
  SignaturePolicy,
} from "../receipts/index.js";
import { verifiedReceiptLookup } from "../receipts/lookup.js";
import type { Json, JsonRecord, ReceiptLookup } from "../tools/types.js";

/** What one payment receipt records. */
export interface PaymentReceiptSpec {
  step: string;
  verb: "commit" | "reverse";
  operation: string;
  amount: number;
  currency?: string;
  rail?: string;
  payer?: string;
  realm?: string;
  /** The charge receipt a refund links (`runx:receipt:<id>` verification ref). */
  links?: string;
  disposition?: ClosureDisposition;
  /** The receipt's `idempotency.intent_key` (a refund's, from `refundIntentKey`). */
  intentKey?: string;
}

/** A sealed payment receipt (local development signature unless `signer` is given). */
export function paymentReceipt(
  spec: PaymentReceiptSpec,
  signer: ReceiptSigner = localDevelopmentSigner(),
): Receipt {
  const unsealed = buildSkillReceipt({
    name: "refund-test",
    step: spec.step,
    createdAt: "2026-01-01T00:00:00Z",
    disposition: spec.disposition ?? "closed",
    reasonCode: "process_closed",
    grantRefs: [{ type: "grant", uri: `runx:grant:payment:${spec.step}` }],
    ...(spec.intentKey !== undefined
      ? {
          idempotency: {
            intent_key: spec.intentKey,
            trigger_fingerprint: `sha256:refund-test-${spec.step}-trigger`,
            content_hash: `sha256:refund-test-${spec.step}-content`,
          },
        }
      : {}),
  });
  const rail = spec.rail ?? "mock";
  unsealed.authority.terms = [
    {
      term_id: `payment-${spec.step}`,
      principal_ref: { type: "principal", uri: "runx:principal:operator" },
      resource_ref: { type: "target", uri: spec.payer ?? "payer:demo" },
      resource_family: "effect",
      verbs: [spec.verb],
      bounds: {
        effect_limits: [
          {
            family: "payment",
            unit: spec.currency ?? "USD",
            max_per_call_units: spec.amount,
            max_per_run_units: 500,
            channels: [rail],
            realm: spec.realm ?? "test",
            peer: spec.payer ?? "payer:demo",
            operation: spec.operation,
            authorization_form: "single_use_capability",
            idempotency_required: true,
            recovery_required: true,
            receipt_before_success: true,
            single_use_capability: true,
          },
        ],
      },
      conditions: [],
      approvals: [],
      capabilities: ["effect_single_use_capability"],
      issued_by_ref: { type: "grant", uri: "runx:grant:payment" },
    },
  ];
  const refs: Reference[] = [
    {
      type: "verification",
      uri: `proof:${spec.step}`,
      provider: rail,
      label: "payment rail supervisor proof",
      proof_kind: "effect_evidence",
    },
    {
      type: "target",
      uri: `runx:money_movement:${spec.step}`,
      provider: rail,
      label: "verified payment movement",
      proof_kind: "effect_finality",
    },
  ];
  if (spec.links !== undefined) {
    refs.push({
      type: "receipt",
      uri: `runx:receipt:${spec.links}`,
      label: "original payment receipt",
      proof_kind: "effect_finality",
    });
  }
  const [act] = unsealed.acts;
  const [binding] = act?.criterion_bindings ?? [];
  if (binding !== undefined) binding.verification_refs = refs;
  const [criterion] = unsealed.seal.criteria;
  if (criterion !== undefined) criterion.verification_refs = [...refs];
  return sealReceipt(unsealed, signer);
}

/**
 * The parent payment authority a refund request carries: a single-use `reverse` term for
 * refunding `payer:demo` on the mock rail, 125 USD by default. `limit` overrides fields of its
 * one payment effect limit, `term` fields of the term.
 */
export function refundParentAuthority(
  limit: Record<string, Json | undefined> = {},
  term: JsonRecord = {},
): JsonRecord {
  return {
    term_id: "refund-parent",
    principal_ref: { type: "principal", uri: "runx:principal:operator" },
    resource_ref: { type: "target", uri: "payer:demo" },
    resource_family: "effect",
    verbs: ["reverse"],
    bounds: {
      effect_limits: [
        {
          family: "payment",
          unit: "USD",
          max_per_call_units: 125,
          max_per_run_units: 125,
          channels: ["mock"],
          realm: "test",
          peer: "payer:demo",
          operation: "refund",
          authorization_form: "single_use_capability",
          idempotency_required: true,
          recovery_required: true,
          receipt_before_success: true,
          single_use_capability: true,
          ...limit,
        },
      ],
    },
    conditions: [],
    approvals: [],
    capabilities: ["effect_single_use_capability"],
    issued_by_ref: { type: "grant", uri: "runx:grant:payment" },
    ...term,
  };
}

/** A receipt store in a temp directory and a lookup over it. */
export interface TestReceiptStore {
  store: ReceiptStore;
  lookup: ReceiptLookup;
  /** Writes receipts (verified by the store first). */
  add(...receipts: Receipt[]): Promise<void>;
  /** Rewrites a stored receipt's file text, bypassing every check (a tampered store). */
  tamper(id: string, edit: (text: string) => string): void;
  cleanup(): void;
}

/** Creates a {@link TestReceiptStore} under `policy` (local development by default). */
export function makeTestReceiptStore(
  policy: SignaturePolicy = localDevelopmentPolicy(),
): TestReceiptStore {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "runx-refund-receipts-")));
  const store = new ReceiptStore({ dir, policy, label: "test-receipts" });
  return {
    store,
    lookup: verifiedReceiptLookup(() => store),
    async add(...receipts) {
      await store.writeAll(receipts);
    },
    tamper(id, edit) {
      const file = join(dir, `sha256-${id.slice("sha256:".length)}.json`);
      const before = readFileSync(file, "utf8");
      const after = edit(before);
      if (after === before) throw new Error("tamper edit changed nothing");
      writeFileSync(file, after);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
