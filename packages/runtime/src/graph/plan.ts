/**
 * Preparation rules that need facts from outside the graph document: result
 * producers' output contracts, and retry admission (a mutating step may only retry with an
 * idempotency key). The facts come from a resolver the caller builds from nested skills'
 * runners and the tool catalog. Pure.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import type { RetryPolicy, RunnerCommon } from "../parser/runner-types.js";
import type { GraphDoc, GraphStep, StepContract } from "./document-types.js";

/** Returns what is known about a step's executable (nested skill runner or tool), if anything. */
export type StepContractResolver = (step: GraphStep) => StepContract | undefined;

/** Output keys a declaration emits: `artifacts.wrap_as`, else `named_emits` and `outputs` names. */
export function declaredOutputKeys(declaration: {
  outputs?: unknown;
  artifacts?: unknown;
}): string[] | undefined {
  const artifacts = isJsonObject(declaration.artifacts) ? declaration.artifacts : {};
  if (typeof artifacts.wrap_as === "string") return [artifacts.wrap_as];
  const named = isJsonObject(artifacts.named_emits) ? Object.keys(artifacts.named_emits) : [];
  const outputs = isJsonObject(declaration.outputs) ? Object.keys(declaration.outputs) : [];
  const keys = [...new Set([...named, ...outputs])];
  return keys.length > 0 ? keys : undefined;
}

/** The output keys a step declares in the graph itself (step or inline `run:` declarations). */
export function stepOutputContract(step: GraphStep): string[] | undefined {
  const run: JsonObject = step.kind === "run" ? step.run : {};
  return declaredOutputKeys({
    outputs: step.outputs ?? run.outputs,
    artifacts: step.artifacts ?? run.artifacts,
  });
}

/** A step contract from a nested skill's selected runner (`mutating`, `risk.mutating`, retry). */
export function contractFromRunner(
  runner: Pick<
    RunnerCommon,
    "outputs" | "artifacts" | "mutating" | "risk" | "retry" | "idempotency"
  >,
): StepContract {
  const contract: StepContract = {};
  const outputs = declaredOutputKeys({ outputs: runner.outputs, artifacts: runner.artifacts });
  const risky = isJsonObject(runner.risk) && runner.risk.mutating === true;
  if (outputs !== undefined) contract.outputs = outputs;
  if (runner.mutating === true || risky) contract.mutating = true;
  if (runner.retry !== undefined) contract.retry = runner.retry;
  if (runner.idempotency !== undefined) contract.idempotency_key = runner.idempotency.key;
  return contract;
}

/** A copy of the document with each step's external contract attached (`step.contract`). */
export function bindStepContracts(doc: GraphDoc, resolve: StepContractResolver): GraphDoc {
  return {
    ...doc,
    steps: doc.steps.map((step) => {
      const contract = resolve(step);
      return contract === undefined ? step : { ...step, contract };
    }),
  };
}

/** The output keys a producer emits: graph declarations first, then its bound contract. */
export function producerKeys(
  step: GraphStep,
  resolve?: StepContractResolver,
): string[] | undefined {
  const keys = stepOutputContract(step) ?? resolve?.(step)?.outputs ?? step.contract?.outputs;
  return keys !== undefined && keys.length > 0 ? keys : undefined;
}

/** True when a producer's keys are a native tool's fixed named output, not a declared contract. */
export function emitsToolOutput(step: GraphStep): boolean {
  return stepOutputContract(step) === undefined && step.contract?.tool_output === true;
}

/**
 * Whether two result producers may both emit one key. The graph
 * result is the union, in `result_from` order, of each successful producer's complete
 * contract, and two producers of one declared key (graph `outputs` / `artifacts`, a nested
 * skill's runner contract) are an authoring conflict. A native tool's named output is fixed
 * by the catalog, so two calls of one tool (`[locate, forecast]` over `http.read`,
 * `[append, readback]` over the data store) necessarily share it; the later-listed
 * producer's packet is the result's value, and every producer's packet stays in its own
 * step output and receipt.
 */
export function sharesResultKey(earlier: GraphStep, later: GraphStep): boolean {
  return emitsToolOutput(earlier) && emitsToolOutput(later);
}

/**
 * Rejects (GRAPH_INVALID) a `result_from` producer without a semantic output contract, or two
 * unconditional producers emitting the same declared key (`sharesResultKey` names the
 * exception); conditional producers (`when`) are usually exclusive branches and are checked
 * when they succeed. Returns each producer's keys. Compat graphs whose result defaulted to the
 * last step are exempt from the contract requirement.
 */
export function validateResultProducers(
  doc: GraphDoc,
  resolve?: StepContractResolver,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const owner = new Map<string, GraphStep>();
  for (const id of doc.result_from) {
    const step = doc.steps.find((s) => s.id === id);
    if (step === undefined)
      throw new RuntimeError("GRAPH_INVALID", `result_from names unknown step '${id}'`, {
        step_id: id,
        path: "result_from",
      });
    const keys = producerKeys(step, resolve);
    if (keys === undefined) {
      if (doc.result_from_defaulted) continue;
      throw new RuntimeError(
        "GRAPH_INVALID",
        `result producer '${id}' has no semantic output contract (outputs, artifacts.wrap_as or artifacts.named_emits)`,
        { step_id: id, path: `steps[${step.index}]` },
      );
    }
    out[id] = keys;
    if (step.when !== undefined) continue;
    for (const key of keys) {
      const other = owner.get(key);
      if (other !== undefined && !sharesResultKey(other, step))
        throw new RuntimeError(
          "GRAPH_INVALID",
          `result producers '${other.id}' and '${id}' both emit '${key}'`,
          { step_id: id, key, path: `steps[${step.index}].outputs.${key}` },
        );
      owner.set(key, step);
    }
  }
  return out;
}

/** The retry facts of a step: step fields first, then its nested skill's / tool's contract. */
export interface EffectiveRetry {
  max_attempts: number;
  mutating: boolean;
  idempotency_key?: string;
}

/** Combines step-level and skill-level retry, mutation and idempotency declarations. */
export function effectiveRetry(step: GraphStep): EffectiveRetry {
  const retry: RetryPolicy | undefined = step.retry ?? step.contract?.retry;
  const key = step.idempotency_key ?? step.contract?.idempotency_key;
  const out: EffectiveRetry = {
    max_attempts: Math.max(1, retry?.max_attempts ?? 1),
    mutating: step.mutating || step.contract?.mutating === true,
  };
  if (key !== undefined && key !== "") out.idempotency_key = key;
  return out;
}

/** The decision of retry admission for one step. */
export interface RetryAdmission {
  status: "allow" | "deny";
  reasons: string[];
}

/** Admits a retry policy: mutating steps may retry only with an idempotency key. */
export function admitRetryPolicy(request: {
  stepId: string;
  mutating: boolean;
  maxAttempts: number;
  idempotencyKey?: string;
}): RetryAdmission {
  if (request.maxAttempts <= 1) return { status: "allow", reasons: ["retry policy not requested"] };
  if (request.mutating && (request.idempotencyKey === undefined || request.idempotencyKey === ""))
    return {
      status: "deny",
      reasons: [`step '${request.stepId}' declares mutating retry without an idempotency key`],
    };
  return { status: "allow", reasons: ["retry policy allowed"] };
}

/** Steps whose retry policy is refused, in declaration order. */
export function retryRefusals(doc: GraphDoc): { stepId: string; reason: string }[] {
  const out: { stepId: string; reason: string }[] = [];
  for (const step of doc.steps) {
    const retry = effectiveRetry(step);
    const request = { stepId: step.id, mutating: retry.mutating, maxAttempts: retry.max_attempts };
    const admission = admitRetryPolicy(
      retry.idempotency_key === undefined
        ? request
        : { ...request, idempotencyKey: retry.idempotency_key },
    );
    if (admission.status === "deny")
      out.push({ stepId: step.id, reason: admission.reasons.join("; ") });
  }
  return out;
}

/** Throws RETRY_REFUSED naming the first step whose mutating retry has no idempotency key. */
export function assertRetryAdmissible(doc: GraphDoc): void {
  const refused = retryRefusals(doc)[0];
  if (refused !== undefined)
    throw new RuntimeError("RETRY_REFUSED", refused.reason, { step_id: refused.stepId });
}
