/**
 * The harness's provider response lane (`caller.provider_responses`): one
 * `ProviderDriver` per granted provider that answers `provider.read` / `provider.mutate` from
 * the fixture's declared operations and performs no effect anywhere. The tools around it
 * still admit the call, bind the plan, key the effect in the ledger, screen and project the
 * result; only the provider's answer comes from the fixture.
 *
 * Grant selection: exactly one declared grant for the provider whose scopes cover the calling
 * step's scopes. An operation answers a call when it names that grant and the exact
 * operation, target and access. Each operation answers one call, in order; a read whose
 * operations are all used is answered again by the last one (reads repeat freely), a
 * mutation is not. Results may carry `$request.<field>` and `$previous.<field>` strings
 * (fields: idempotency_key, operation, target), replaced by the current or the previous
 * answered call's value; the idempotency key is the one the provider receives.
 */
import { RuntimeError } from "../../errors.js";
import type { Json, JsonRecord, ProviderCallFacts, ProviderDriver } from "../types.js";

/** One declared grant. */
export interface ProviderLaneGrant {
  grant_id: string;
  provider: string;
  scopes: string[];
}

/** One declared operation and its result. */
export interface ProviderLaneOperation {
  grant_id: string;
  operation: string;
  target: string;
  access: "read" | "mutate";
  result: JsonRecord;
}

/** The whole lane of one harness case. */
export interface ProviderLane {
  principal_id: string;
  grants: ProviderLaneGrant[];
  operations: ProviderLaneOperation[];
}

interface AnsweredCall {
  idempotency_key: string | null;
  operation: string;
  target: string;
}

const TEMPLATE = /^\$(request|previous)\.([A-Za-z_][A-Za-z0-9_]*)$/;
const TEMPLATE_FIELDS = new Set(["idempotency_key", "operation", "target"]);

function unmatched(message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError("FIXTURE_UNMATCHED", message, details);
}

function fill(
  value: Json,
  current: AnsweredCall,
  previous: AnsweredCall | undefined,
  at: string,
): Json {
  if (typeof value === "string") {
    const match = TEMPLATE.exec(value);
    if (match === null) return value;
    const [, which = "", field = ""] = match;
    if (!TEMPLATE_FIELDS.has(field)) {
      throw unmatched(
        `${at}: ${value} names an unknown field (use idempotency_key, operation or target)`,
        { path: at },
      );
    }
    const source = which === "request" ? current : previous;
    if (source === undefined) {
      throw unmatched(`${at}: ${value} has no previous provider call to refer to`, { path: at });
    }
    const filled = source[field as keyof AnsweredCall];
    if (filled === null) {
      throw unmatched(`${at}: ${value} is empty (that call carried no idempotency key)`, {
        path: at,
      });
    }
    return filled;
  }
  if (Array.isArray(value))
    return value.map((item, i) => fill(item, current, previous, `${at}[${i}]`));
  if (value !== null && typeof value === "object") {
    const out: JsonRecord = {};
    for (const [key, item] of Object.entries(value))
      out[key] = fill(item, current, previous, `${at}.${key}`);
    return out;
  }
  return value;
}

/** Creates one driver per provider the lane grants, sharing one call history. */
export function createProviderLaneDrivers(lane: ProviderLane): Map<string, ProviderDriver> {
  const used = new Set<number>();
  let previous: AnsweredCall | undefined;

  const selectGrant = (
    provider: string,
    call: ProviderCallFacts | undefined,
  ): ProviderLaneGrant => {
    const scopes = call?.scopes ?? [];
    const grants = lane.grants.filter(
      (grant) =>
        grant.provider === provider && scopes.every((scope) => grant.scopes.includes(scope)),
    );
    if (grants.length !== 1) {
      throw new RuntimeError(
        "PROVIDER_MISMATCH",
        grants.length === 0
          ? `no caller.provider_responses grant of ${provider} covers scopes [${scopes.join(", ")}]`
          : `${grants.length} caller.provider_responses grants of ${provider} cover scopes [${scopes.join(", ")}]; exactly one must`,
        { provider, scopes: [...scopes] },
      );
    }
    return grants[0] as ProviderLaneGrant;
  };

  const answer = (
    provider: string,
    access: "read" | "mutate",
    operation: string,
    target: string,
    idempotencyKey: string | null,
    call: ProviderCallFacts | undefined,
  ): JsonRecord => {
    const grant = selectGrant(provider, call);
    const candidates = lane.operations.flatMap((op, index) =>
      op.grant_id === grant.grant_id && op.operation === operation && op.target === target
        ? [{ op, index }]
        : [],
    );
    const sameAccess = candidates.filter((c) => c.op.access === access);
    if (candidates.length > 0 && sameAccess.length === 0) {
      throw unmatched(
        `caller.provider_responses declares ${operation} on ${target} as ${candidates[0]?.op.access}, but provider.${access === "read" ? "read" : "mutate"} called it`,
        { provider, operation, target, access },
      );
    }
    let picked = sameAccess.find((c) => !used.has(c.index));
    if (picked === undefined && access === "read") picked = sameAccess[sameAccess.length - 1];
    if (picked === undefined) {
      throw unmatched(
        `no caller.provider_responses operation answers ${access} ${provider} ${operation} on ${target}${sameAccess.length > 0 ? " again" : ""}; the harness never falls back to a live provider`,
        { provider, operation, target, access },
      );
    }
    used.add(picked.index);
    const current: AnsweredCall = { idempotency_key: idempotencyKey, operation, target };
    const result = fill(
      picked.op.result,
      current,
      previous,
      `caller.provider_responses.operations[${picked.index}].result`,
    ) as JsonRecord;
    previous = current;
    return result;
  };

  const drivers = new Map<string, ProviderDriver>();
  for (const provider of new Set(lane.grants.map((grant) => grant.provider))) {
    drivers.set(provider, {
      name: provider,
      read: (operation, target, _input, call) =>
        Promise.resolve().then(() => answer(provider, "read", operation, target, null, call)),
      mutate: (operation, target, _payload, key, call) =>
        Promise.resolve().then(() => answer(provider, "mutate", operation, target, key, call)),
      authority: (call) => ({
        grant_id: selectGrant(provider, call).grant_id,
        principal_ref: `runx:principal:${lane.principal_id}`,
      }),
    });
  }
  return drivers;
}
