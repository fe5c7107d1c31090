import { describe, expect, it } from "vitest";
import { subsetViolation, type AuthorityTerm } from "./authority.js";
import { paymentInvoicePlanTool } from "./invoice-plan.js";
import { paymentQuoteTool } from "./quote.js";
import { paymentReserveTool } from "./reserve.js";
import {
  createMemoryEffectLedger,
  failureCode,
  makeToolContext,
  successOutput,
} from "../../testing/tool-context.js";
import type { Json, JsonRecord, ToolContext } from "../types.js";

// The test clock is 2026-01-01T00:00:00Z.
const ctx = (overrides: Partial<ToolContext> = {}): ToolContext =>
  makeToolContext({ workspaceRoot: "/nonexistent-workspace", ...overrides });

type Limit = Record<string, Json | undefined>;

function parent(limit: Limit = {}, term: JsonRecord = {}): JsonRecord {
  return {
    term_id: "authority:parent",
    principal_ref: { type: "principal", uri: "principal:operator:test" },
    resource_ref: { type: "surface", uri: "merchant:demo" },
    resource_family: "effect",
    verbs: ["prepare", "commit"],
    bounds: {
      effect_limits: [
        {
          family: "payment",
          unit: "USD",
          max_per_call_units: 1000,
          max_per_run_units: 5000,
          channels: ["mock", "mpp"],
          realm: "test",
          peer: "merchant:demo",
          operation: "search.paid",
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
    expires_at: "2026-06-01T00:00:00Z",
    issued_by_ref: { type: "host", uri: "authority:payment:test" },
    ...term,
  };
}

function signal(overrides: JsonRecord = {}): JsonRecord {
  return {
    signal_type: "effect_required",
    challenge_id: "ch_1",
    amount_minor: 125,
    currency: "USD",
    counterparty: "merchant:demo",
    operation: "search.paid",
    realm: "test",
    ...overrides,
  };
}

function quoteInput(overrides: JsonRecord = {}): JsonRecord {
  return {
    payment_signal: signal(),
    parent_payment_authority: parent(),
    idempotency_seed: "seed-1",
    ...overrides,
  };
}

async function quote(input: JsonRecord, context = ctx()): Promise<JsonRecord> {
  return successOutput(await paymentQuoteTool.execute(input, context));
}

describe("payment.quote", () => {
  it("binds the signal to a single-use child authority within the parent", async () => {
    const packet = await quote(quoteInput({ rail_preferences: ["mpp", "mock"] }));
    const payment = packet.payment_quote as JsonRecord;
    expect(payment).toMatchObject({
      amount_minor: 125,
      currency: "USD",
      rails: ["mpp"],
      counterparty: "merchant:demo",
      operation: "search.paid",
      realm: "test",
      observed_at: "2026-01-01T00:00:00.000Z",
    });
    expect(payment.quote_id as string).toMatch(/^quote-[0-9a-f]{64}$/);
    const requested = packet.requested_payment_authority as unknown as AuthorityTerm;
    expect(requested.bounds.effect_limits).toEqual([
      expect.objectContaining({
        max_per_call_units: 125,
        max_per_run_units: 125,
        channels: ["mpp"],
        single_use_capability: true,
      }),
    ]);
    expect(requested.expires_at).toBe("2026-06-01T00:00:00Z");
    expect(subsetViolation(requested, parent() as unknown as AuthorityTerm)).toBeUndefined();
    expect(packet.challenge_evidence).toMatchObject({ source_refs: ["signal:ch_1"] });
    // The same request quotes the same id; another seed another one.
    const again = await quote(quoteInput({ rail_preferences: ["mpp", "mock"] }));
    expect((again.payment_quote as JsonRecord).quote_id).toBe(payment.quote_id);
    const other = await quote(
      quoteInput({ rail_preferences: ["mpp"], idempotency_seed: "seed-2" }),
    );
    expect((other.payment_quote as JsonRecord).quote_id).not.toBe(payment.quote_id);
  });

  it("takes the signal's rail, else the parent's first rail", async () => {
    const bySignal = await quote(quoteInput({ payment_signal: signal({ rail: "mpp" }) }));
    expect((bySignal.payment_quote as JsonRecord).rails).toEqual(["mpp"]);
    const byParent = await quote(quoteInput());
    expect((byParent.payment_quote as JsonRecord).rails).toEqual(["mock"]);
  });

  it.each([
    ["an amount over the per-call ceiling", { payment_signal: signal({ amount_minor: 1001 }) }],
    ["an amount over the caller ceiling", { max_per_call_units: 100 }],
    ["a zero amount", { payment_signal: signal({ amount_minor: 0 }) }],
    ["another currency", { payment_signal: signal({ currency: "EUR" }) }],
    ["a currency input contradicting the signal", { currency: "EUR" }],
    ["another counterparty", { payment_signal: signal({ counterparty: "merchant:other" }) }],
    ["another operation", { payment_signal: signal({ operation: "search.free" }) }],
    ["another realm", { payment_signal: signal({ realm: "live" }) }],
    ["a rail outside the parent", { payment_signal: signal({ rail: "x402" }) }],
    [
      "a rail outside the preferences",
      { payment_signal: signal({ rail: "mpp" }), rail_preferences: ["mock"] },
    ],
    ["preferences the parent does not allow", { rail_preferences: ["x402"] }],
    [
      "an expired parent",
      { parent_payment_authority: parent({}, { expires_at: "2025-12-31T23:59:59Z" }) },
    ],
    ["a wildcard peer", { parent_payment_authority: parent({ peer: "*" }) }],
    [
      "a parent without aggregate ceiling",
      { parent_payment_authority: parent({ max_per_run_units: undefined }) },
    ],
    [
      "a parent without single-use form",
      { parent_payment_authority: parent({ authorization_form: "bearer" }) },
    ],
    ["a parent without commit", { parent_payment_authority: parent({}, { verbs: ["prepare"] }) }],
    [
      "a reference instead of a term",
      { parent_payment_authority: { authority_ref: "authority:x" } },
    ],
    ["a signal carrying raw card data", { payment_signal: signal({ card_number: "4242" }) }],
    [
      "two payment limits",
      {
        parent_payment_authority: {
          ...parent(),
          bounds: {
            effect_limits: [
              (parent().bounds as JsonRecord & { effect_limits: Limit[] }).effect_limits[0],
              { family: "payment", unit: "EUR", max_per_call_units: 1 },
            ],
          },
        },
      },
    ],
  ])("refuses %s", async (_label, overrides) => {
    const input = JSON.parse(JSON.stringify(quoteInput(overrides as JsonRecord))) as JsonRecord;
    expect(failureCode(await paymentQuoteTool.execute(input, ctx()))).toBe("INPUT_INVALID");
  });
});

describe("payment.reserve", () => {
  const target = { type: "harness", uri: "runx:harness:spend" };

  async function reserveInput(overrides: JsonRecord = {}): Promise<JsonRecord> {
    return {
      payment_quote_packet: await quote(quoteInput()),
      parent_payment_authority: parent(),
      idempotency_seed: "seed-1",
      target_harness_ref: target,
      target_act_id: "act_fulfill",
      ...overrides,
    };
  }

  it("mints a proven subset bound to one act, pending approval, once", async () => {
    const effects = createMemoryEffectLedger();
    const context = ctx({ effects, scopes: ["payment:reserve"] });
    const input = await reserveInput();
    const packet = successOutput(await paymentReserveTool.execute(input, context));
    const reserved = packet.reserved_payment_authority as JsonRecord;
    const child = reserved.child_authority as unknown as AuthorityTerm;
    expect(child.term_id).toMatch(/^mint-[0-9a-f]{64}$/);
    expect(subsetViolation(child, parent() as unknown as AuthorityTerm)).toBeUndefined();
    expect(reserved.subset_proof).toMatchObject({
      result: "subset",
      compared_terms: [{ child_term_id: child.term_id, parent_term_id: "authority:parent" }],
    });
    expect(reserved.spend_capability_binding).toMatchObject({
      act_id: "act_fulfill",
      amount_minor: 125,
      currency: "USD",
      rail: "mock",
    });
    const key = (packet.idempotency as JsonRecord).key as string;
    expect(key).toMatch(/^payment:[0-9a-f]{64}$/);
    expect(packet.approval).toEqual({ required: true, status: "pending" });
    expect(packet.spend_capability_ref).toEqual({
      type: "credential",
      uri: `capability:payment:${key.slice("payment:".length)}`,
    });
    expect(await effects.lookup(`payment.reserve:${key}`)).toBeDefined();
    // A repeat is the recorded reservation, not a second one.
    const later = ctx({ effects, now: () => new Date("2026-02-01T00:00:00Z") });
    const replay = successOutput(await paymentReserveTool.execute(input, later));
    expect(replay).toEqual(packet);
    // Another act is another reservation.
    const other = successOutput(
      await paymentReserveTool.execute({ ...input, target_act_id: "act_other" }, context),
    );
    expect((other.idempotency as JsonRecord).key).not.toBe(key);
  });

  it("declares its scope and mutation", () => {
    expect(paymentReserveTool.mutating).toBe(true);
    expect(paymentReserveTool.scopes).toEqual(["payment:reserve"]);
  });

  it("refuses a quote over the parent ceiling", async () => {
    const input = await reserveInput({
      parent_payment_authority: parent({ max_per_call_units: 100 }),
    });
    expect(failureCode(await paymentReserveTool.execute(input, ctx()))).toBe("INPUT_INVALID");
  });

  it("refuses a quote whose requested authority was widened", async () => {
    const input = await reserveInput();
    const packet = input.payment_quote_packet as JsonRecord;
    const requested = packet.requested_payment_authority as JsonRecord & {
      bounds: { effect_limits: Limit[] };
    };
    const widen = (
      mutate: (
        term: JsonRecord & { bounds: { effect_limits: Limit[] } },
        quote: JsonRecord,
      ) => void,
    ) => {
      const copy = JSON.parse(JSON.stringify(requested)) as typeof requested;
      const quoteCopy = JSON.parse(JSON.stringify(packet.payment_quote)) as JsonRecord;
      mutate(copy, quoteCopy);
      return {
        ...input,
        payment_quote_packet: {
          ...packet,
          payment_quote: quoteCopy,
          requested_payment_authority: copy,
        },
      };
    };
    // Unchanged, the quote reserves (so each refusal below is the widening's).
    expect(
      (
        await paymentReserveTool.execute(
          widen(() => undefined),
          ctx(),
        )
      ).status,
    ).toBe("success");
    const cases = [
      widen((t, q) => {
        (t.bounds.effect_limits[0] as Limit).channels = ["x402"];
        q.rails = ["x402"];
      }),
      widen((t, q) => {
        (t.bounds.effect_limits[0] as Limit).max_per_call_units = 2000;
        (t.bounds.effect_limits[0] as Limit).max_per_run_units = 2000;
        q.amount_minor = 2000;
      }),
      widen((t) => (t.verbs = ["prepare", "commit", "admin"])),
      widen((t) => (t.expires_at = "2027-01-01T00:00:00Z")),
      widen((t) => (t.resource_ref = { type: "surface", uri: "merchant:other" })),
      widen((t) => ((t.bounds.effect_limits[0] as Limit).max_per_run_units = 126)),
    ];
    for (const widened of cases) {
      expect(failureCode(await paymentReserveTool.execute(widened, ctx()))).toBe("INPUT_INVALID");
    }
  });

  it("refuses an expired parent and a mismatched target binding", async () => {
    const input = await reserveInput();
    const later = ctx({ now: () => new Date("2026-06-01T00:00:00Z") });
    expect(failureCode(await paymentReserveTool.execute(input, later))).toBe("INPUT_INVALID");
    const badTarget = { ...input, target_harness_ref: { uri: "runx:harness:spend" } };
    expect(failureCode(await paymentReserveTool.execute(badTarget, ctx()))).toBe("INPUT_INVALID");
  });
});

describe("payment.invoice_plan", () => {
  function invoice(overrides: JsonRecord = {}): JsonRecord {
    return {
      invoice_ref: "INV-1",
      amount_minor: 900,
      currency: "USD",
      payee: { name: "Acme", party_ref: "merchant:acme", settlement_ref: "payee-account:acme" },
      rail: "mock",
      rail_profile_ref: "rail-profile:mock:test",
      parent_payment_authority: parent({ peer: "merchant:acme", operation: "invoice.settle" }),
      idempotency_seed: "invoice-1",
      realm: "test",
      ...overrides,
    };
  }

  async function plan(input: JsonRecord): Promise<JsonRecord> {
    const envelope = successOutput(await paymentInvoicePlanTool.execute(input, ctx()))
      .settlement_plan as JsonRecord;
    expect(Object.keys(envelope)).toEqual(["data"]);
    return envelope.data as JsonRecord;
  }

  const findingCodes = (data: JsonRecord): string[] =>
    (data.findings as JsonRecord[]).map((f) => f.code as string);

  describe("against the workspace's registered payees", () => {
    const registered = [
      { party_ref: "merchant:acme", name: "Acme", settlement_ref: "payee-account:acme" },
      { party_ref: "merchant:other", name: "Other", settlement_digest: `sha256:${"d".repeat(64)}` },
    ];
    async function planWith(input: JsonRecord): Promise<JsonRecord> {
      const result = await paymentInvoicePlanTool.execute(input, ctx({ payees: registered }));
      return (successOutput(result).settlement_plan as JsonRecord).data as JsonRecord;
    }

    it("plans a payee that resolves to its registration", async () => {
      const data = await planWith(invoice());
      expect(data.decision).toBe("ready_for_spend");
      expect(data.findings).toEqual([]);
    });

    it.each([
      [
        "a party nobody registered",
        { name: "Acme", party_ref: "merchant:unknown", settlement_ref: "payee-account:acme" },
        "payee.unregistered",
      ],
      [
        "a registered party at another settlement account",
        { name: "Acme", party_ref: "merchant:acme", settlement_ref: "payee-account:attacker" },
        "payee.registration_mismatch",
      ],
      [
        "a registered party under another name",
        { name: "Acme Ltd", party_ref: "merchant:acme", settlement_ref: "payee-account:acme" },
        "payee.registration_mismatch",
      ],
      [
        "a registered party by digest when it is registered by reference",
        { name: "Acme", party_ref: "merchant:acme", settlement_digest: `sha256:${"d".repeat(64)}` },
        "payee.registration_mismatch",
      ],
    ])("blocks %s", async (_label, payee, code) => {
      const data = await planWith(invoice({ payee }));
      expect(data.decision).toBe("blocked");
      expect(data.downstream).toBeNull();
      expect(findingCodes(data)).toContain(code);
    });

    it("blocks every payee when the registry is empty", async () => {
      const result = await paymentInvoicePlanTool.execute(invoice(), ctx({ payees: [] }));
      const data = (successOutput(result).settlement_plan as JsonRecord).data as JsonRecord;
      expect(findingCodes(data)).toEqual(["payee.unregistered"]);
    });
  });

  it("hands a valid invoice to spend with the exact inputs", async () => {
    const data = await plan(invoice({ payment_admission: { payment_admission_id: "adm-1" } }));
    expect(data.decision).toBe("ready_for_spend");
    expect(data.findings).toEqual([]);
    expect(data.provider_effect).toEqual({ status: "not_started", money_moved: false });
    const downstream = data.downstream as JsonRecord;
    expect(downstream).toMatchObject({ skill: "spend", runner: "mock" });
    expect(downstream.inputs).toMatchObject({
      payment_signal: {
        signal_type: "invoice",
        invoice_ref: "INV-1",
        amount_minor: 900,
        counterparty: "merchant:acme",
        operation: "invoice.settle",
        realm: "test",
      },
      rail_profile_ref: "rail-profile:mock:test",
      idempotency_seed: "invoice-1",
      realm: "test",
      payment_admission: { payment_admission_id: "adm-1" },
    });
    expect(data.plan_digest as string).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it.each([
    ["an amount over the authority", { amount_minor: 1001 }, "authority.denied"],
    ["an unsupported rail", { rail: "ach" }, "rail.unsupported"],
    ["a rail the authority does not allow", { rail: "stripe-spt" }, "authority.denied"],
    ["another currency", { currency: "EUR" }, "authority.denied"],
    ["another realm", { realm: "live" }, "authority.denied"],
    [
      "raw bank fields",
      {
        payee: { name: "A", party_ref: "merchant:acme", settlement_ref: "s", account_number: "1" },
      },
      "payee.raw_fields",
    ],
    [
      "two settlement identities",
      {
        payee: {
          name: "A",
          party_ref: "merchant:acme",
          settlement_ref: "s",
          settlement_digest: `sha256:${"c".repeat(64)}`,
        },
      },
      "payee.settlement",
    ],
    [
      "no settlement identity",
      { payee: { name: "A", party_ref: "merchant:acme" } },
      "payee.settlement",
    ],
    [
      "a secret-shaped party ref",
      { payee: { name: "A", party_ref: "sk-live", settlement_ref: "s" } },
      "payee.party_ref",
    ],
    [
      "a missing payee name",
      { payee: { party_ref: "merchant:acme", settlement_ref: "s" } },
      "payee.name",
    ],
  ])("blocks %s without a handoff", async (_label, overrides, code) => {
    const data = await plan(invoice(overrides));
    expect(data.decision).toBe("blocked");
    expect(data.downstream).toBeNull();
    expect(findingCodes(data)).toContain(code);
  });

  it.each([
    ["a zero amount", { amount_minor: 0 }],
    ["a fractional amount", { amount_minor: 12.5 }],
    ["a lowercase currency", { currency: "usd" }],
    ["a reference-only authority", { parent_payment_authority: { authority_ref: "a" } }],
  ])("refuses %s", async (_label, overrides) => {
    expect(failureCode(await paymentInvoicePlanTool.execute(invoice(overrides), ctx()))).toBe(
      "INPUT_INVALID",
    );
  });
});
