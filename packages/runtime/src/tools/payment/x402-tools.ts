/**
 * The x402 rail's planning tools; none of them pays.
 *
 * - `payment.x402_challenge` asks the paid resource without payment and admits the
 *   `402 Payment Required` challenge it answers with (x402-challenge.ts).
 * - `payment.x402_quote` binds the challenge's payment signal to the caller's parent authority
 *   (the shared quote rules: caps, currency, payee, operation, realm, the x402 rail) and keeps
 *   the requirement digest, so the pay step can refuse a drifted price.
 * - `payment.x402_reserve` mints the single-use child authority beneath the parent (never
 *   broader: the subset proof runs on it) and records the reservation in the effect ledger.
 *
 * Every refusal is POLICY_DENIED (policy.ts): the run seals `blocked` and nothing was paid.
 */
import challengeInputSchema from "../../../schemas/tools/payment-x402-challenge.input.schema.json" with { type: "json" };
import challengeOutputSchema from "../../../schemas/tools/payment-x402-challenge.output.schema.json" with { type: "json" };
import quoteInputSchema from "../../../schemas/tools/payment-x402-quote.input.schema.json" with { type: "json" };
import quoteOutputSchema from "../../../schemas/tools/payment-x402-quote.output.schema.json" with { type: "json" };
import reserveInputSchema from "../../../schemas/tools/payment-x402-reserve.input.schema.json" with { type: "json" };
import reserveOutputSchema from "../../../schemas/tools/payment-x402-reserve.output.schema.json" with { type: "json" };
import { validateToolsPaymentX402ChallengeInput } from "../../generated/validate-tools-payment-x402-challenge.input.js";
import { validateToolsPaymentX402QuoteInput } from "../../generated/validate-tools-payment-x402-quote.input.js";
import { validateToolsPaymentX402ReserveInput } from "../../generated/validate-tools-payment-x402-reserve.input.js";
import { RuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { DEFAULT_TIMEOUT_MS, performExchange } from "../http/http-exchange.js";
import { mintChild, type AuthorityTerm } from "./authority.js";
import { quotePacket, type PaymentSignal, type QuoteInput } from "./quote.js";
import { reservationPacket, type ReserveInput } from "./reserve.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";
import { asPolicyRefusal, paymentRefused, toPolicyRefusal } from "./policy.js";
import { admitX402Challenge, challengeBody, type X402Challenge } from "./x402-challenge.js";

/** The rail name quotes and authorities carry. */
export const X402_RAIL = "x402";
/** The act a reservation's capability is bound to. */
export const X402_TARGET = {
  harness_ref: { type: "skill", uri: "runx:spend#x402" },
  act_id: "pay",
};
const CHALLENGE_BYTES = 64 * 1024;

/** The canonical URL of a resource, refusing what is not an absolute http(s) URL. */
export function resourceUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RuntimeError("INPUT_INVALID", "resource_url is not a URL", { path: "resource_url" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RuntimeError("INPUT_INVALID", "resource_url must be http or https", {
      path: "resource_url",
    });
  }
  return url;
}

/** Sends one request to the resource (only its own host is admitted) and returns the answer. */
export async function askResource(
  ctx: ToolContext,
  request: { url: URL; method: string; headers: Record<string, string>; access: "read" | "mutate" },
): Promise<{ status: number; headers: Record<string, string>; body: Uint8Array }> {
  const { response } = await performExchange(
    ctx,
    {
      method: request.method,
      url: request.url.href,
      headers: request.headers,
      maxResponseBytes: CHALLENGE_BYTES,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      followRedirects: false,
      hostAllowed: (hostname) => hostname.toLowerCase() === request.url.hostname.toLowerCase(),
      access: request.access,
    },
    {},
  );
  return response;
}

/** Asks the resource without payment and admits its 402 challenge. */
export async function probeChallenge(
  ctx: ToolContext,
  input: { resource_url: string; method?: string; realm?: string },
): Promise<X402Challenge> {
  const url = resourceUrl(input.resource_url);
  const answer = await askResource(ctx, {
    url,
    method: input.method ?? "GET",
    headers: { accept: "application/json" },
    access: "read",
  });
  if (answer.status !== 402) {
    throw paymentRefused(
      "challenge_malformed",
      `the resource answered ${answer.status}, not 402 Payment Required`,
      "resource_url",
    );
  }
  return admitX402Challenge(challengeBody(answer.body), url.href, input.realm);
}

export const paymentX402ChallengeTool: NativeTool = defineTool<
  { resource_url: string; method?: string; realm?: string },
  JsonRecord
>({
  name: "payment.x402_challenge",
  description:
    "Ask a paid resource without payment and admit the single bounded x402 challenge it answers with; pays nothing.",
  mutating: false,
  scopes: ["net:http"],
  inputSchema: challengeInputSchema,
  outputSchema: challengeOutputSchema,
  validate: validateToolsPaymentX402ChallengeInput,
  async run(input, ctx) {
    const challenge = await probeChallenge(ctx, input);
    const { amount_minor: amount, currency, pay_to: payTo } = challenge.requirement;
    return {
      output: { x402_challenge: challenge as unknown as JsonRecord },
      summary: `x402 challenge: ${amount} ${currency} to ${payTo}`,
    };
  },
});

interface X402QuoteInput {
  x402_challenge: X402Challenge;
  parent_payment_authority: AuthorityTerm;
  idempotency_seed: string;
  realm?: string;
  max_per_call_units?: number;
}

export const paymentX402QuoteTool: NativeTool = defineTool<X402QuoteInput, JsonRecord>({
  name: "payment.x402_quote",
  description:
    "Quote one admitted x402 challenge against the caller's parent payment authority (caps, currency, payee, operation, realm, rail); moves no money.",
  mutating: false,
  scopes: [],
  inputSchema: quoteInputSchema,
  outputSchema: quoteOutputSchema,
  validate: validateToolsPaymentX402QuoteInput,
  run(input, ctx) {
    const challenge = input.x402_challenge;
    if (hashCanonical(challenge.requirement) !== challenge.requirement_digest) {
      throw paymentRefused(
        "binding_mismatch",
        "x402_challenge.requirement does not match its requirement_digest",
        "x402_challenge.requirement_digest",
      );
    }
    const quoteInput: QuoteInput = {
      payment_signal: challenge.payment_signal as unknown as PaymentSignal,
      parent_payment_authority: input.parent_payment_authority,
      rail_preferences: [X402_RAIL],
      idempotency_seed: input.idempotency_seed,
    };
    if (input.realm !== undefined) quoteInput.realm = input.realm;
    if (input.max_per_call_units !== undefined) {
      quoteInput.max_per_call_units = input.max_per_call_units;
    }
    const packet = asPolicyRefusal(() => quotePacket(quoteInput, ctx.now()));
    packet.x402 = { requirement_digest: challenge.requirement_digest };
    const { amount_minor: amount, currency } = challenge.requirement;
    return Promise.resolve({
      output: { payment_quote_packet: packet },
      summary: `quoted ${amount} ${currency} on x402`,
    });
  },
});

interface X402ReserveInput {
  payment_quote_packet: ReserveInput["payment_quote_packet"];
  parent_payment_authority: AuthorityTerm;
  idempotency_seed: string;
  requested_payment_authority?: AuthorityTerm;
}

export const paymentX402ReserveTool: NativeTool = defineTool<X402ReserveInput, JsonRecord>({
  name: "payment.x402_reserve",
  description:
    "Mint the single-use child payment authority for one x402 quote (never broader than the parent) and record the reservation; pays nothing.",
  mutating: true,
  scopes: ["payment:reserve"],
  inputSchema: reserveInputSchema,
  outputSchema: reserveOutputSchema,
  validate: validateToolsPaymentX402ReserveInput,
  async run(input, ctx) {
    const quotePacketData = { ...input.payment_quote_packet };
    const proposed = input.requested_payment_authority;
    if (proposed !== undefined) {
      // The subset proof runs first, so a broader child is refused as broader.
      asPolicyRefusal(() =>
        mintChild(input.parent_payment_authority, proposed, ctx.now().toISOString()),
      );
      quotePacketData.requested_payment_authority = proposed;
    }
    const reserveInput: ReserveInput = {
      payment_quote_packet: quotePacketData,
      parent_payment_authority: input.parent_payment_authority,
      idempotency_seed: input.idempotency_seed,
      target_harness_ref: X402_TARGET.harness_ref,
      target_act_id: X402_TARGET.act_id,
    };
    const packet = asPolicyRefusal(() => reservationPacket(reserveInput, ctx.now()));
    const key = (packet.idempotency as JsonRecord).key as string;
    const child = (packet.reserved_payment_authority as JsonRecord).child_authority as JsonRecord;
    // The key already digests quote, parent, seed and act; with the child it names the request
    // (the packet itself carries the proof's clock, so a retry would never match it).
    const digest = hashCanonical({ key, child_term_id: child.term_id as string });
    const ledgerKey = `payment.x402_reserve:${key}`;
    const prior = await ctx.effects.lookup(ledgerKey);
    if (prior !== undefined) {
      if (prior.request_digest !== digest) {
        throw paymentRefused(
          "ledger_refused",
          `reservation ${key} was made for another request`,
          "idempotency_seed",
        );
      }
      return { output: { reservation: prior.output }, summary: `reservation ${key} (replayed)` };
    }
    try {
      await ctx.effects.record(ledgerKey, { request_digest: digest, output: packet });
    } catch (error) {
      throw toPolicyRefusal(error);
    }
    return { output: { reservation: packet }, summary: `reserved ${key}` };
  },
});
