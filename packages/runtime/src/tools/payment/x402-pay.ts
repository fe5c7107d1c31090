/**
 * `payment.x402_pay`: the one x402 step that can move money. In order:
 *
 * 1. bind: the challenge, the quote and the reservation must name the same payment (amount,
 *    currency, payee, operation, requirement digest, rail x402, a single-use child);
 * 2. replay: a payment already recorded under the reservation's idempotency key is returned
 *    as recorded (another plan under that key is a ledger refusal);
 * 3. approve: the step pauses on a `provider-effect:<plan digest>` gate whose summary carries
 *    provider, operation, payee, amount and digests, the same fields the plan binds;
 * 4. drift: the resource is asked again without payment; a requirement whose digest changed
 *    since the quote is refused;
 * 5. claim: the ledger's exclusive claim decides which of two concurrent resumes pays; the
 *    other waits for the recorded outcome and replays it;
 * 6. pay: the resource is asked once more with `X-PAYMENT`, which carries only sealed
 *    references (payment, reservation, idempotency key), never a parent authority or a
 *    credential; success needs a 2xx with an `X-PAYMENT-RESPONSE` proof bound to that payment
 *    reference.
 *
 * Steps 1 to 5 refuse with POLICY_DENIED and nothing reaches the resource as a payment.
 * `money_moved` is `true` only with proof of settlement, `false` when the rail refused or was
 * never asked, and `null` when the rail was asked and gave no answer either way (recorded,
 * never retried blindly).
 */
import inputSchema from "../../../schemas/tools/payment-x402-pay.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/payment-x402-pay.output.schema.json" with { type: "json" };
import { validateToolsPaymentX402PayInput } from "../../generated/validate-tools-payment-x402-pay.input.js";
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { inputValidator, validatedExecute } from "../ajv-input.js";
import { failureResult } from "../define-tool.js";
import { headerValue } from "../http/http-exchange.js";
import { digestHex } from "./authority.js";
import { providerGateId } from "../provider/provider.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";
import { paymentRefused, toPolicyRefusal } from "./policy.js";
import type { X402Challenge } from "./x402-challenge.js";
import { X402_RAIL, askResource, probeChallenge, resourceUrl } from "./x402-tools.js";

/** Schema tag of the payment record. */
export const X402_PAYMENT_PACKET = "runx.payment.x402_payment.v1";
const SCOPES = ["net:http", "payment:x402"];
/** How long a resume waits for a concurrent claimant's recorded outcome. */
const HELD_WAIT_MS = 60_000;

interface PayInput {
  resource_url: string;
  method?: string;
  x402_challenge: X402Challenge;
  payment_quote_packet: JsonRecord;
  reservation: JsonRecord;
  approval_reason?: string;
}

const rec = (value: unknown): JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : {};

/** The payment every packet must agree on, and the plan the approval binds. */
interface BoundPayment {
  url: URL;
  method: string;
  key: string;
  plan: JsonRecord;
  planDigest: string;
  paymentRef: string;
  decisionId: string;
}

/**
 * The plan a `payment.x402_pay` input binds, and its digest (the gate is
 * `provider-effect:<digest>`); throws POLICY_DENIED when the packets disagree. The console
 * rebuilds it from the paused step's input to check what an approval releases.
 */
export function x402Plan(input: JsonRecord): { plan: JsonRecord; digest: string } {
  const bound = bind(input as unknown as PayInput);
  return { plan: bound.plan, digest: bound.planDigest };
}

function bind(input: PayInput): BoundPayment {
  const url = resourceUrl(input.resource_url);
  const req = input.x402_challenge.requirement;
  const quote = rec(input.payment_quote_packet.payment_quote);
  const x402 = rec(input.payment_quote_packet.x402);
  const reserved = rec(input.reservation.reserved_payment_authority);
  const binding = rec(reserved.spend_capability_binding);
  const limit = rec(
    (rec(rec(reserved.child_authority).bounds).effect_limits as JsonRecord[] | undefined)?.[0],
  );
  const checks: Array<[string, boolean]> = [
    ["resource", req.resource === url.href],
    ["requirement_digest", x402.requirement_digest === input.x402_challenge.requirement_digest],
    [
      "amount",
      quote.amount_minor === req.amount_minor && binding.amount_minor === req.amount_minor,
    ],
    ["currency", quote.currency === req.currency && binding.currency === req.currency],
    ["payee", quote.counterparty === req.pay_to && binding.counterparty === req.pay_to],
    ["operation", quote.operation === req.operation],
    ["rail", binding.rail === X402_RAIL],
    ["single_use", limit.single_use_capability === true],
  ];
  const failed = checks.filter(([, ok]) => !ok).map(([name]) => name);
  const key = rec(input.reservation.idempotency).key;
  const capability = rec(input.reservation.spend_capability_ref).uri;
  const decisionId = binding.reservation_decision_id;
  if (failed.length > 0 || typeof key !== "string" || typeof capability !== "string") {
    throw paymentRefused(
      "binding_mismatch",
      `challenge, quote and reservation do not bind one payment (${failed.join(", ") || "reservation"})`,
      "reservation",
    );
  }
  const method = input.method ?? "GET";
  const paymentRef = `x402-payment:${digestHex({ capability, key, digest: x402.requirement_digest })}`;
  const plan: JsonRecord = {
    provider: X402_RAIL,
    operation: req.operation,
    target: req.pay_to,
    resource: url.href,
    method,
    scopes: SCOPES,
    amount: { units: req.amount_minor, unit: req.currency },
    idempotency_key: key,
    requirement_digest: input.x402_challenge.requirement_digest,
    payment_ref: paymentRef,
  };
  return {
    url,
    method,
    key,
    plan,
    planDigest: hashCanonical(plan),
    paymentRef,
    decisionId: typeof decisionId === "string" ? decisionId : "",
  };
}

function resultOf(record: JsonRecord): ToolResult {
  const output = { x402_payment: record };
  const status = typeof record.status === "string" ? record.status : "unknown";
  if (status === "settled") {
    return { status: "success", output, summary: `paid ${JSON.stringify(record.payment_ref)}` };
  }
  return {
    status: "failure",
    code: "PROVIDER_FAILED",
    summary: `x402 payment ${status} (money_moved: ${JSON.stringify(record.money_moved ?? null)})`,
    output,
  };
}

/** Decodes a base64 JSON header value, or undefined. */
function decodeHeader(value: string | undefined): JsonRecord | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as JsonRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

async function sendPayment(
  ctx: ToolContext,
  bound: BoundPayment,
  challenge: X402Challenge,
): Promise<JsonRecord> {
  const header = Buffer.from(
    JSON.stringify({
      x402Version: 1,
      scheme: challenge.requirement.scheme,
      network: challenge.requirement.network,
      payload: {
        payment_ref: bound.paymentRef,
        reservation_ref: bound.decisionId,
        idempotency_key: bound.key,
      },
    }),
  ).toString("base64");
  let answer: Awaited<ReturnType<typeof askResource>>;
  try {
    answer = await askResource(ctx, {
      url: bound.url,
      method: bound.method,
      headers: { accept: "application/json", "x-payment": header, "idempotency-key": bound.key },
      access: "mutate",
    });
  } catch (error) {
    const code = isRuntimeError(error) ? error.code : "PROVIDER_FAILED";
    return { status: "unknown", money_moved: null, settlement: null, failure_code: code };
  }
  const response = {
    status: answer.status,
    body_digest: hashCanonical(Buffer.from(answer.body).toString("base64")),
    content_type: headerValue(answer.headers, "content-type") ?? null,
  };
  if (answer.status === 402) {
    return {
      status: "rejected",
      money_moved: false,
      settlement: null,
      resource_response: response,
    };
  }
  const proof = decodeHeader(headerValue(answer.headers, "x-payment-response"));
  const proven =
    answer.status >= 200 &&
    answer.status < 300 &&
    proof?.success === true &&
    proof.payment_ref === bound.paymentRef &&
    typeof proof.transaction === "string";
  if (!proven) {
    return { status: "unproven", money_moved: null, settlement: null, resource_response: response };
  }
  return {
    status: "settled",
    money_moved: true,
    settlement: {
      transaction_ref: proof.transaction as string,
      network: typeof proof.network === "string" ? proof.network : challenge.requirement.network,
      proof_digest: hashCanonical(proof),
    },
    resource_response: response,
  };
}

async function awaitRecorded(ctx: ToolContext, ledgerKey: string): Promise<JsonRecord> {
  const deadline = Date.now() + HELD_WAIT_MS;
  while (Date.now() < deadline) {
    const found = await ctx.effects.lookup(ledgerKey);
    if (found !== undefined) return { ...rec(found.output), replayed: true };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new RuntimeError(
    "PROVIDER_FAILED",
    "another run holds this payment's claim and recorded no outcome; reconcile before retrying",
    { reason: "claim_held" },
  );
}

async function pay(input: PayInput, ctx: ToolContext): Promise<ToolResult> {
  try {
    const bound = bind(input);
    const ledgerKey = `payment.x402:${bound.key}`;
    const prior = await ctx.effects.lookup(ledgerKey);
    if (prior !== undefined) {
      if (prior.request_digest !== bound.planDigest) {
        throw paymentRefused(
          "ledger_refused",
          "the reservation's idempotency key already paid another plan",
          "reservation.idempotency.key",
        );
      }
      return resultOf({ ...rec(prior.output), replayed: true });
    }
    const gateId = providerGateId(bound.planDigest);
    const decision = ctx.approvals.get(gateId);
    const amount = bound.plan.amount as { units: number; unit: string };
    if (decision === undefined) {
      const reason = input.approval_reason ?? "Approve this exact x402 payment.";
      return {
        status: "needs_approval",
        approval: {
          gate_id: gateId,
          gate_type: "payment_spend",
          reason: ctx.taint.redactText(reason),
          summary: {
            provider: X402_RAIL,
            operation: input.x402_challenge.requirement.operation,
            target: input.x402_challenge.requirement.pay_to,
            scopes: SCOPES,
            payload_digest: hashCanonical({ payment_ref: bound.paymentRef }),
            plan_digest: bound.planDigest,
            amount,
          },
        },
      };
    }
    if (!decision.approved) {
      return {
        status: "declined",
        summary: "the x402 payment was not approved (no money moved)",
        output: {
          gate_id: gateId,
          approved: false,
          plan_digest: bound.planDigest,
          money_moved: false,
        },
      };
    }
    const current = await probeChallenge(ctx, {
      resource_url: input.resource_url,
      ...(input.method !== undefined ? { method: input.method } : {}),
    });
    if (current.requirement_digest !== input.x402_challenge.requirement_digest) {
      throw paymentRefused(
        "quote_drift",
        `the resource's price changed since the quote (${current.requirement.amount_minor} ${current.requirement.currency} now)`,
        "x402_challenge.requirement_digest",
      );
    }
    if (ctx.effects.claim === undefined) {
      throw paymentRefused("ledger_refused", "the effect ledger cannot claim payments", "effects");
    }
    const claim = await ctx.effects.claim(ledgerKey, bound.planDigest).catch((error: unknown) => {
      throw toPolicyRefusal(error);
    });
    if (claim === "held") return resultOf(await awaitRecorded(ctx, ledgerKey));
    const approval: JsonRecord = { gate_id: gateId, gate_type: "payment_spend", approved: true };
    if (decision.actor !== undefined) approval.actor = decision.actor;
    const outcome = await sendPayment(ctx, bound, input.x402_challenge);
    const record: JsonRecord = {
      schema: X402_PAYMENT_PACKET,
      ...bound.plan,
      plan_digest: bound.planDigest,
      reservation_ref: bound.decisionId,
      approval,
      ...outcome,
      replayed: false,
    };
    await ctx.effects.record(ledgerKey, { request_digest: bound.planDigest, output: record });
    return resultOf(record);
  } catch (error) {
    return failureResult(error);
  }
}

const validator = inputValidator(validateToolsPaymentX402PayInput, inputSchema);

/** `payment.x402_pay`. */
export const paymentX402PayTool: NativeTool = {
  name: "payment.x402_pay",
  description:
    "Pay one quoted, reserved x402 challenge exactly once after one human approval; the resource receives sealed references only.",
  mutating: true,
  scopes: SCOPES,
  inputSchema,
  outputSchema,
  validateInput: validator,
  execute: validatedExecute("payment.x402_pay", validator, (input, ctx) =>
    pay(input as unknown as PayInput, ctx),
  ),
};
