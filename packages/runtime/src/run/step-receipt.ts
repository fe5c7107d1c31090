/**
 * Seals and stores the child receipt of one graph step attempt (`sealStepReceipt`), with the
 * facts a tool step's receipt adds beyond its output: the stable rule a refusing tool named
 * (`failure_reason`) and, for a `provider.mutate` payment that settled, the proof a later
 * refund is bounded by (`tools/payment/settled-payment.ts`). The receipt profile of a harness
 * replay drops live-only facts, never a settled payment's proof: that is what the receipt means.
 */
import type { GraphDoc } from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import { buildSkillReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import { settledPaymentFacts, type SettledPaymentFacts } from "../tools/payment/settled-payment.js";
import {
  commitment,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  stepKey,
  storeReceipt,
} from "./context.js";
import type { RunScope } from "./context.js";
import type { SealOutcome } from "./graph-stop.js";
import { appendRunEvent } from "./ledger.js";

/** Seals and stores the child receipt of one step attempt. */
export async function sealStepReceipt(
  scope: RunScope,
  doc: GraphDoc,
  stepId: string,
  attempt: number,
  outcome: SealOutcome,
  declaredOutputs: readonly string[] | undefined,
): Promise<Receipt> {
  const { deps, prep, taint } = scope;
  const key = stepKey(scope, stepId);
  const output = taint.redactJson(outcome.output) as Record<string, unknown>;
  const closed = outcome.disposition === "closed";
  const claim =
    closed && declaredOutputs !== undefined
      ? Object.fromEntries(declaredOutputs.filter((k) => k in output).map((k) => [k, output[k]]))
      : {};
  const contentDigest = hashCanonical({ step: stepId, attempt, output: closed ? output : null });
  const summary = outcome.summary !== undefined ? taint.redactText(outcome.summary) : undefined;
  const profile = profiled(deps, {
    name: doc.name,
    createdAt: receiptTimestamp(deps.now()),
    commitments: [
      ...(closed ? [commitment("output", hashCanonical(output))] : []),
      ...(outcome.streams !== undefined
        ? [
            commitment("stdout", outcome.streams.stdoutSha256),
            commitment("stderr", outcome.streams.stderrSha256),
          ]
        : []),
    ],
    ...(outcome.boundary !== undefined ? { executionBoundary: outcome.boundary } : {}),
    idempotency: idempotencyFor(prep, contentDigest, `${key}#${attempt}`),
    metadata: {
      ...runMetadata(deps, prep),
      step_id: stepId,
      ...(key !== stepId ? { step_path: key } : {}),
      attempt,
      ...outcome.metadata,
    },
  });
  const settled = outcome.settlement;
  const receipt = sealReceipt(
    buildSkillReceipt({
      ...profile,
      ...(settled !== undefined
        ? {
            authorityTerms: [...(profile.authorityTerms ?? []), ...settled.authorityTerms],
            grantRefs: settled.grantRefs,
            verificationRefs: settled.verificationRefs,
            sourceRefs: settled.sourceRefs,
          }
        : {}),
      step: stepId,
      disposition: outcome.disposition,
      reasonCode: outcome.reasonCode,
      ...(closed ? {} : { sealSummary: summary ?? `step ${stepId} ${outcome.disposition}` }),
      ...(summary !== undefined && !closed ? { outcomeSummary: summary } : {}),
      claim: claim as Record<string, never>,
      ...(outcome.children !== undefined ? { children: outcome.children } : {}),
      ...(outcome.lineage !== undefined ? { lineage: outcome.lineage } : {}),
    }),
    deps.signer(),
  );
  await storeReceipt(
    deps,
    prep,
    receipt,
    async (tx) => {
      await tx.upsertStep({
        runId: prep.runId,
        stepId: key,
        status: outcome.disposition,
        attempt,
        receiptId: receipt.id,
        outputJson: JSON.stringify({ output }),
        // Milliseconds, as the start is: the receipt's own time is to the second.
        ...(outcome.startedAt !== undefined ? { startedAt: outcome.startedAt } : {}),
        finishedAt: deps.now().toISOString(),
      });
      await appendRunEvent(tx, prep.runId, {
        kind: "step_finished",
        status: outcome.disposition,
        stepId: key,
        detail: { attempt, reason_code: outcome.reasonCode },
        producer: { skill: prep.pkg.name, runner: prep.runner.name },
        createdAt: deps.now().toISOString(),
        receiptId: receipt.id,
      });
    },
    { isChild: true },
  );
  return receipt;
}

/** `{failure_reason}`: the stable rule a tool refused under (`details.reason`), when it names one. */
export function failureReason(output: JsonObject | undefined): { failure_reason?: string } {
  const details = output?.details;
  const reason =
    typeof details === "object" && details !== null && !Array.isArray(details)
      ? details.reason
      : undefined;
  return typeof reason === "string" && reason !== "" ? { failure_reason: reason } : {};
}

/** `{settlement}` when a tool step settled a payment (`tools/payment/settled-payment.ts`). */
export function settlementOf(
  tool: string,
  input: JsonObject,
  output: JsonObject | undefined,
): { settlement?: SettledPaymentFacts } {
  if (tool !== "provider.mutate") return {};
  const settlement = settledPaymentFacts(input, output);
  return settlement !== undefined ? { settlement } : {};
}
