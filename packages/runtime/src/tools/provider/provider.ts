/**
 * `provider.read` and `provider.mutate` over the configured `ProviderDriver`s.
 *
 * A mutation is bound to upstream runx's provider effect plan (`mutationPlan`): provider,
 * the grant and principal it runs under, operation, target, the step's scopes, the payload
 * digest, the idempotency key's digest and (when present) the typed amount. Every mutation
 * waits for one human decision on that plan: the plan digest names the approval gate
 * (`provider-effect:sha256:<64 hex>`, the ids upstream's resume files and harness fixtures
 * carry), so a human decides on that exact act; the summary the approver sees is built only
 * from those admitted fields, never from package free text. The typed amount lives in the plan and the summary, never in the
 * provider payload. Effects are keyed: without `idempotency_key` nothing happens; the same
 * key and plan replay the recorded outcome from `ctx.effects` (no second effect); the same
 * key with another plan is refused. An effect whose outcome is unknown (the driver failed)
 * is recorded as a failure and replayed as one — it is reconciled, never retried blindly.
 */
import { validateToolsProviderMutateInput } from "../../generated/validate-tools-provider-mutate.input.js";
import { validateToolsProviderReadInput } from "../../generated/validate-tools-provider-read.input.js";
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { canonicalJson, hashCanonical, sha256Prefixed } from "../../receipts/canonical.js";
import mutateInputSchema from "../../../schemas/tools/provider-mutate.input.schema.json" with { type: "json" };
import mutateOutputSchema from "../../../schemas/tools/provider-mutate.output.schema.json" with { type: "json" };
import readInputSchema from "../../../schemas/tools/provider-read.input.schema.json" with { type: "json" };
import readOutputSchema from "../../../schemas/tools/provider-read.output.schema.json" with { type: "json" };
import { inputValidator, validatedExecute } from "../ajv-input.js";
import { failureOf } from "../http/http-exchange.js";
import type {
  ApprovalSummary,
  Json,
  JsonRecord,
  NativeTool,
  ProviderAuthority,
  ProviderDriver,
  ToolContext,
  ToolResult,
} from "../types.js";
import { isRecord, withNamedOutput } from "../packet.js";
import { admitPaymentEffect } from "../payment/settled-payment.js";

/** Key names a provider result may not carry into persisted state. */
export const SECRET_FIELD_NAMES: ReadonlySet<string> = new Set([
  "access_token",
  "refresh_token",
  "api_key",
  "client_secret",
  "password",
  "secret",
  "token",
  "private_key",
]);

const text = (value: Json | undefined): string => (typeof value === "string" ? value : "");

/** The admitted request of one provider call. */
interface ProviderCall {
  driver: ProviderDriver;
  operation: string;
  target: string;
  payload: JsonRecord;
  scopes: string[];
  payloadDigest: string;
}

/** The operation payload of a provider call's input (`input`; an empty object when absent). */
export function payloadOf(input: JsonRecord): JsonRecord {
  return isRecord(input.input) ? input.input : {};
}

/** The plan one `provider.mutate` input is bound to, with its typed amount and approval. */
export interface MutationPlan {
  plan: JsonRecord;
  /** `hashCanonical(plan)`: the approval gate is named after it (`providerGateId`). */
  digest: string;
  amount?: { units: number; unit: string };
  /** The step's own wording of the approval it asks for (display only; not in the plan). */
  approval?: { reason: string; type?: string };
}

/** The authority of a driver without grants of its own: the local runtime. */
export const LOCAL_PROVIDER_AUTHORITY = {
  principal_ref: "runx:principal:local_runtime",
} as const;

/** The facts a mutation plan binds besides the tool input. */
export interface MutationFacts {
  provider: string;
  scopes: readonly string[];
  payloadDigest: string;
  authority: ProviderAuthority;
}

/**
 * The plan of a mutation, as upstream runx's provider effect plan
 * (`runx.provider.effect_plan.v1`): class, provider, the grant and principal it runs under,
 * operation, target, the payload digest, the step's scopes (sorted, each once) and the digest
 * of the idempotency key, so one approval releases exactly one act. `amount` is upstream's
 * `null` unless the step declares a typed amount, which the plan then binds too. The console
 * checks a paused gate's payload with this same function, so what an approver sees is what
 * the gate binds.
 */
export function mutationPlan(input: JsonRecord, call: MutationFacts): MutationPlan {
  const amount = isRecord(input.amount)
    ? { units: Number(input.amount.units), unit: text(input.amount.unit) }
    : undefined;
  let approval: { reason: string; type?: string } | undefined;
  if (isRecord(input.approval)) {
    approval = { reason: text(input.approval.reason) };
    if (text(input.approval.type) !== "") approval.type = text(input.approval.type);
  }
  const key = typeof input.idempotency_key === "string" ? input.idempotency_key.trim() : "";
  const plan: JsonRecord = {
    schema: "runx.provider.effect_plan.v1",
    class: "mutation",
    provider: call.provider,
    grant_id: call.authority.grant_id,
    principal_ref: call.authority.principal_ref,
    operation: text(input.operation).trim(),
    target: text(input.target).trim(),
    payload_digest: call.payloadDigest,
    required_scopes: [...new Set(call.scopes)].sort(),
    amount: amount ?? null,
    request_key_digest: key === "" ? null : sha256Prefixed(key),
  };
  return {
    plan,
    digest: hashCanonical(plan),
    ...(amount !== undefined ? { amount } : {}),
    ...(approval !== undefined ? { approval } : {}),
  };
}

function admitCall(input: JsonRecord, ctx: ToolContext): ProviderCall {
  const payload = payloadOf(input);
  if (ctx.taint.taints(canonicalJson(payload))) {
    throw new RuntimeError("INPUT_INVALID", "input carries delivered credential material", {
      path: "input",
    });
  }
  const expected = text(input.expected_provider);
  const driver = ctx.providers.get(expected);
  if (driver === undefined || driver.name !== expected) {
    throw new RuntimeError("PROVIDER_MISMATCH", `no provider grant selects ${expected}`, {
      path: "expected_provider",
    });
  }
  return {
    driver,
    operation: text(input.operation),
    target: text(input.target),
    payload,
    scopes: [...new Set(ctx.scopes)].sort(),
    payloadDigest: hashCanonical(payload),
  };
}

/** Finds the first key with a secret field name, as a dotted path. */
function secretFieldPath(value: Json, path: string): string | undefined {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = secretFieldPath(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
  } else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (SECRET_FIELD_NAMES.has(key.toLowerCase())) return `${path}.${key}`;
      const found = secretFieldPath(item, `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Redacts, screens, checks `expected_result`, then projects `result_fields`. */
function admitResult(raw: JsonRecord, input: JsonRecord, ctx: ToolContext): JsonRecord {
  const result = ctx.taint.redactJson(raw) as JsonRecord;
  const secret = secretFieldPath(result, "result");
  if (secret !== undefined) {
    throw new RuntimeError(
      "PROVIDER_FAILED",
      `provider result carries a secret field (${secret})`,
      {
        path: secret,
      },
    );
  }
  if (isRecord(input.expected_result)) {
    for (const [field, want] of Object.entries(input.expected_result)) {
      const got = result[field];
      if (got === undefined || canonicalJson(got) !== canonicalJson(want)) {
        throw new RuntimeError("PROVIDER_RESULT_MISMATCH", `result field ${field} does not match`, {
          path: `expected_result.${field}`,
        });
      }
    }
  }
  if (!Array.isArray(input.result_fields)) return result;
  const projected: JsonRecord = {};
  for (const field of input.result_fields) {
    if (typeof field === "string" && result[field] !== undefined) projected[field] = result[field];
  }
  return projected;
}

function baseOutput(
  call: ProviderCall,
  access: "read" | "mutate",
  planDigest: string,
  key: string | null,
): JsonRecord {
  return {
    schema: "runx.provider.operation.v1",
    provider: call.driver.name,
    operation: call.operation,
    target: call.target,
    access,
    transport: "local",
    idempotency_key: key,
    operation_id: null,
    status: null,
    payload_digest: call.payloadDigest,
    plan_digest: planDigest,
    result_digest: hashCanonical({}),
    result: {},
    replayed: false,
  };
}

/**
 * The output of an answered call. `status` is the operation's outcome (`success`), as
 * upstream reports it; a provider's own record status stays inside `result`.
 */
function withResult(output: JsonRecord, result: JsonRecord): JsonRecord {
  const id = result.effect_id ?? result.operation_id;
  return {
    ...output,
    operation_id: typeof id === "string" ? id : null,
    status: "success",
    result_digest: hashCanonical(result),
    result,
  };
}

async function providerRead(input: JsonRecord, ctx: ToolContext): Promise<ToolResult> {
  try {
    const call = admitCall(input, ctx);
    const plan = {
      provider: call.driver.name,
      operation: call.operation,
      target: call.target,
      scopes: call.scopes,
      payload_digest: call.payloadDigest,
    };
    const raw = await call.driver.read(call.operation, call.target, call.payload, {
      scopes: call.scopes,
    });
    const output = withResult(
      baseOutput(call, "read", hashCanonical(plan), null),
      admitResult(raw, input, ctx),
    );
    if (typeof input.readback === "boolean") output.readback = input.readback;
    return {
      status: "success",
      output,
      summary: `${call.driver.name} ${call.operation} ${call.target}`,
    };
  } catch (error) {
    return failureOf(error, ctx.taint);
  }
}

/**
 * What a message operation's approver must see besides the plan: the audience, channel,
 * content digest and consent basis, from the admitted payload (absent fields are `null`).
 */
export function messageFacts(call: {
  operation: string;
  target: string;
  payload: JsonRecord;
}): ApprovalSummary["message"] {
  if (!call.operation.startsWith("message.")) return undefined;
  return {
    channel: call.target,
    audience: call.payload.audience ?? null,
    content_digest: call.payload.content_digest ?? null,
    consent_basis: call.payload.consent_basis ?? null,
  };
}

/** The gate id a provider plan's approval is requested and decided under. */
export function providerGateId(planDigest: string): string {
  return `provider-effect:${planDigest}`;
}

function asFailure(output: JsonRecord): ToolResult | undefined {
  const failure = output.failure;
  if (!isRecord(failure)) return undefined;
  return { status: "failure", code: text(failure.code), summary: text(failure.summary), output };
}

async function providerMutate(input: JsonRecord, ctx: ToolContext): Promise<ToolResult> {
  const key = typeof input.idempotency_key === "string" ? input.idempotency_key.trim() : "";
  if (key === "") {
    const error = new RuntimeError(
      "IDEMPOTENCY_KEY_REQUIRED",
      "provider.mutate needs an idempotency_key",
    );
    return failureOf(error, ctx.taint);
  }
  try {
    if (
      isRecord(input.input) &&
      Object.prototype.hasOwnProperty.call(input.input, "idempotency_key")
    ) {
      throw new RuntimeError(
        "INPUT_INVALID",
        "idempotency_key belongs on the tool, not inside input",
        {
          path: "input.idempotency_key",
        },
      );
    }
    const call = admitCall(input, ctx);
    const authority = call.driver.authority?.({ scopes: call.scopes }) ?? {
      grant_id: call.driver.name,
      ...LOCAL_PROVIDER_AUTHORITY,
    };
    const {
      digest: planDigest,
      plan,
      amount,
      approval,
    } = mutationPlan(input, {
      provider: call.driver.name,
      scopes: call.scopes,
      payloadDigest: call.payloadDigest,
      authority,
    });

    // A payment the step receipt could not prove is refused before it can happen.
    admitPaymentEffect({
      operation: call.operation,
      payload: call.payload,
      ...(amount !== undefined ? { amount } : {}),
      approvalRequested: approval !== undefined,
    });

    const ledgerKey = `provider.mutate:${call.driver.name}:${key}`;
    const prior = await ctx.effects.lookup(ledgerKey);
    if (prior !== undefined) {
      if (prior.request_digest !== planDigest) {
        throw new RuntimeError(
          "IDEMPOTENCY_CONFLICT",
          "idempotency_key was already used for a different plan",
        );
      }
      const replay = { ...prior.output, replayed: true };
      return (
        asFailure(replay) ?? { status: "success", output: replay, summary: "idempotent replay" }
      );
    }

    let output = baseOutput(call, "mutate", planDigest, key);
    if (amount !== undefined) output.amount = amount;
    // Every provider mutation waits for one exact human decision on its plan, as upstream
    // runx's provider permission effect requires; the step's `approval` only words the ask.
    {
      const gateId = providerGateId(planDigest);
      const gateType = approval?.type ?? "provider_effect";
      const decision = ctx.approvals.get(gateId);
      if (decision === undefined) {
        const summary: ApprovalSummary = {
          provider: call.driver.name,
          operation: call.operation,
          target: call.target,
          scopes: call.scopes,
          payload_digest: call.payloadDigest,
          plan_digest: planDigest,
          grant_ref: `runx:grant:${authority.grant_id}`,
          principal_ref: authority.principal_ref,
          required_scopes: plan.required_scopes as string[],
        };
        if (amount !== undefined) summary.amount = amount;
        const message = messageFacts(call);
        if (message !== undefined) summary.message = message;
        const reason = ctx.taint.redactText(
          approval?.reason ??
            `Approve ${call.operation} on ${call.driver.name} for ${call.target}.`,
        );
        return {
          status: "needs_approval",
          approval: { gate_id: gateId, gate_type: gateType, reason, summary },
        };
      }
      if (!decision.approved) {
        const declined: JsonRecord = { gate_id: gateId, approved: false, plan_digest: planDigest };
        return {
          status: "declined",
          summary: "the provider effect was not approved",
          output: declined,
        };
      }
      const attested: JsonRecord = { gate_id: gateId, gate_type: gateType, approved: true };
      if (decision.actor !== undefined) attested.actor = decision.actor;
      output.approval = attested;
    }

    const providerKey = sha256Prefixed(`runx.provider.idempotency.v1\n${call.driver.name}\n${key}`);
    try {
      const raw = await call.driver.mutate(call.operation, call.target, call.payload, providerKey, {
        scopes: call.scopes,
      });
      output = withResult(output, admitResult(raw, input, ctx));
    } catch (error) {
      const failed = failureOf(
        isRuntimeError(error) ? error : new RuntimeError("PROVIDER_FAILED", "provider call failed"),
        ctx.taint,
      );
      if (failed.status === "failure") {
        output.failure = { code: failed.code, summary: failed.summary };
        output.status = "failure";
      }
    }
    await ctx.effects.record(ledgerKey, { request_digest: planDigest, output });
    return (
      asFailure(output) ?? {
        status: "success",
        output,
        summary: `${call.driver.name} ${call.operation} ${call.target}`,
      }
    );
  } catch (error) {
    return failureOf(error, ctx.taint);
  }
}

/** The named output of both provider tools. */
const PROVIDER_OPERATION = { name: "provider_operation", packet: "runx.provider.operation.v1" };

/** The provider effect tools: provider.read and provider.mutate. */
export function providerTools(): NativeTool[] {
  const readValidator = inputValidator(validateToolsProviderReadInput);
  const mutateValidator = inputValidator(validateToolsProviderMutateInput);
  return [
    withNamedOutput(
      {
        name: "provider.read",
        description:
          "Read from a granted provider through its driver; results are screened and projected.",
        mutating: false,
        scopes: [],
        inputSchema: readInputSchema,
        outputSchema: readOutputSchema,
        validateInput: readValidator,
        execute: validatedExecute("provider.read", readValidator, providerRead),
      },
      PROVIDER_OPERATION,
    ),
    withNamedOutput(
      {
        name: "provider.mutate",
        description:
          "Apply one keyed, plan-bound provider effect after one exact human approval of its plan.",
        mutating: true,
        scopes: [],
        inputSchema: mutateInputSchema,
        outputSchema: mutateOutputSchema,
        validateInput: mutateValidator,
        execute: validatedExecute("provider.mutate", mutateValidator, providerMutate),
      },
      PROVIDER_OPERATION,
    ),
  ];
}
