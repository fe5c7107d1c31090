/**
 * Harness fixtures: standalone `*.yaml` files and inline `harness.cases`.
 * Pure: values in, a validated case out. The replay lanes (HTTP, provider responses, seeded
 * receipts) are validated in lanes.ts; anything the harness cannot replay yet is recorded in
 * `unsupported` so the case fails instead of reaching live systems.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { FixtureHttpLanes } from "../tools/http/fixture-http.js";
import type { ProviderLane } from "../tools/provider/provider-lane.js";
import { parseHttpLanes, parseProviderLane, parseSeedReceipts } from "./lanes.js";

/** Statuses a case can end in. */
export const HARNESS_STATUSES = [
  "sealed",
  "failure",
  "needs_agent",
  "policy_denied",
  "escalated",
] as const;
/** See {@link HARNESS_STATUSES}. */
export type HarnessStatus = (typeof HARNESS_STATUSES)[number];

/** `exact` (deep equality) or `subset` expectation of a JSON value. */
export type ValueExpectation = { mode: "exact" | "subset"; value: JsonValue };

/** The `expect.receipt` keys this harness checks. */
export const RECEIPT_EXPECT_KEYS = [
  "schema",
  "body_digest",
  "receipt_id",
  "receipt_digest",
  "harness_id",
  "state",
  "disposition",
  "reason_code",
  "act_ids",
  "decision_ids",
  "child_receipt_refs",
  "child_receipt_count",
] as const;
const RETIRED_RECEIPT_KEYS = new Set([
  "kind",
  "skill_name",
  "source_type",
  "graph_name",
  "owner",
  "skill_execution",
  "graph_execution",
]);
const UNSUPPORTED_RECEIPT_KEYS = new Set(["verification_refs"]);

/** What a case expects. */
export interface CaseExpectation {
  status?: HarnessStatus;
  output?: ValueExpectation;
  steps?: string[];
  stepOutputs?: Record<string, ValueExpectation>;
  receipt?: JsonObject;
}

/** One validated harness case. */
export interface HarnessCaseSpec {
  name: string;
  kind: "skill" | "graph" | "agent_task";
  runner?: string;
  inputs: JsonObject;
  env: Record<string, string>;
  answers: JsonObject;
  approvals: Record<string, boolean>;
  expect: CaseExpectation;
  /** `caller.http_responses` / `caller.http_exchanges`: when set, the only HTTP transport. */
  http?: FixtureHttpLanes;
  /** `caller.provider_responses`: when set, the only provider drivers. */
  providers?: ProviderLane;
  /** `setup.receipts`: package-relative receipt files seeded into the case store. */
  seedReceipts: string[];
  /** Fixture features this harness does not replay yet; a non-empty list fails the case. */
  unsupported: string[];
}

const FIXTURE_KEYS = new Set([
  "name",
  "kind",
  "target",
  "runner",
  "setup",
  "inputs",
  "env",
  "caller",
  "expect",
  "operator_journeys",
  "metadata",
]);
const INLINE_KEYS = new Set([
  "name",
  "runner",
  "inputs",
  "env",
  "caller",
  "expect",
  "operator_journeys",
  "metadata",
]);
const CALLER_LANES = ["http_responses", "http_exchanges", "provider_responses"];
const FORBIDDEN_ENV = new Set(["RUNX_CWD", "RUNX_RECEIPT_DIR"]);

function invalid(path: string, message: string): RuntimeError {
  return new RuntimeError("HARNESS_INVALID", `${path}: ${message}`, { path });
}

function objectAt(raw: JsonObject, key: string, path: string): JsonObject {
  const value = raw[key];
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) throw invalid(`${path}${key}`, "must be a mapping");
  return value;
}

function valueExpectation(value: JsonValue | undefined, path: string): ValueExpectation {
  if (!isJsonObject(value)) throw invalid(path, "must be a mapping with exact or subset");
  const keys = Object.keys(value);
  const mode = keys[0];
  if (keys.length !== 1 || (mode !== "exact" && mode !== "subset")) {
    throw invalid(path, "needs exactly one of exact or subset");
  }
  return { mode, value: value[mode] ?? null };
}

function parseExpect(raw: JsonObject): CaseExpectation {
  const expect = objectAt(raw, "expect", "");
  const out: CaseExpectation = {};
  for (const key of Object.keys(expect)) {
    if (!["status", "output", "steps", "step_outputs", "receipt"].includes(key)) {
      throw invalid(`expect.${key}`, "unknown expectation field");
    }
  }
  if (expect.status !== undefined) {
    if (!HARNESS_STATUSES.includes(expect.status as HarnessStatus)) {
      throw invalid("expect.status", `must be one of ${HARNESS_STATUSES.join(", ")}`);
    }
    out.status = expect.status as HarnessStatus;
  }
  if (expect.output !== undefined) out.output = valueExpectation(expect.output, "expect.output");
  if (expect.steps !== undefined) {
    if (!Array.isArray(expect.steps) || !expect.steps.every((s) => typeof s === "string")) {
      throw invalid("expect.steps", "must be a list of step names");
    }
    out.steps = expect.steps;
  }
  if (expect.step_outputs !== undefined) {
    const steps = objectAt(expect, "step_outputs", "expect.");
    out.stepOutputs = {};
    for (const [step, value] of Object.entries(steps)) {
      out.stepOutputs[step] = valueExpectation(value, `expect.step_outputs.${step}`);
    }
  }
  if (expect.receipt !== undefined) {
    const receipt = objectAt(expect, "receipt", "expect.");
    for (const key of Object.keys(receipt)) {
      if (RETIRED_RECEIPT_KEYS.has(key)) {
        throw invalid(`expect.receipt.${key}`, "retired receipt expectation field");
      }
      if (
        !UNSUPPORTED_RECEIPT_KEYS.has(key) &&
        !(RECEIPT_EXPECT_KEYS as readonly string[]).includes(key)
      ) {
        throw invalid(`expect.receipt.${key}`, "unknown receipt expectation field");
      }
    }
    out.receipt = receipt;
  }
  return out;
}

/** Validates one case body; `inline` cases take kind and target from their package. */
export function parseHarnessCase(
  raw: JsonValue,
  options: { inline: boolean; defaultKind: "skill" | "graph" },
): HarnessCaseSpec {
  if (!isJsonObject(raw)) throw invalid("(case)", "a harness case must be a mapping");
  const allowed = options.inline ? INLINE_KEYS : FIXTURE_KEYS;
  for (const key of Object.keys(raw)) {
    if (key === "web_responses") {
      throw invalid("caller.web_responses", "renamed: use caller.http_responses");
    }
    if (!allowed.has(key)) throw invalid(key, "unknown fixture field");
  }
  if (typeof raw.name !== "string" || raw.name === "") throw invalid("name", "is required");
  const kindRaw = raw.kind ?? options.defaultKind;
  if (kindRaw !== "skill" && kindRaw !== "graph" && kindRaw !== "agent_task") {
    throw invalid("kind", "must be skill, graph or agent_task (others are unsupported)");
  }
  if (raw.runner !== undefined && typeof raw.runner !== "string") {
    throw invalid("runner", "must be a string");
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(objectAt(raw, "env", ""))) {
    if (FORBIDDEN_ENV.has(key)) throw invalid(`env.${key}`, "may not be set by a fixture");
    if (typeof value !== "string") throw invalid(`env.${key}`, "must be a string");
    env[key] = value;
  }
  const caller = objectAt(raw, "caller", "");
  const unsupported: string[] = [];
  for (const key of Object.keys(caller)) {
    if (key === "web_responses") {
      throw invalid("caller.web_responses", "renamed: use caller.http_responses");
    }
    if (!CALLER_LANES.includes(key) && key !== "answers" && key !== "approvals") {
      throw invalid(`caller.${key}`, "unknown caller field");
    }
  }
  const approvals: Record<string, boolean> = {};
  for (const [id, value] of Object.entries(objectAt(caller, "approvals", "caller."))) {
    if (typeof value !== "boolean") throw invalid(`caller.approvals.${id}`, "must be a boolean");
    approvals[id] = value;
  }
  const http = parseHttpLanes(caller);
  const providers = parseProviderLane(caller);
  const seedReceipts = options.inline ? [] : parseSeedReceipts(objectAt(raw, "setup", ""));
  if (kindRaw === "agent_task" && typeof raw.runner !== "string") {
    throw invalid("runner", "an agent_task fixture names its task in runner");
  }
  const expect = parseExpect(raw);
  for (const key of UNSUPPORTED_RECEIPT_KEYS) {
    if (expect.receipt?.[key] !== undefined) unsupported.push(`expect.receipt.${key}`);
  }
  return {
    name: raw.name,
    kind: kindRaw,
    ...(typeof raw.runner === "string" ? { runner: raw.runner } : {}),
    inputs: objectAt(raw, "inputs", ""),
    env,
    answers: objectAt(caller, "answers", "caller."),
    approvals,
    expect,
    ...(http !== undefined ? { http } : {}),
    ...(providers !== undefined ? { providers } : {}),
    seedReceipts,
    unsupported,
  };
}

/** The standalone fixture's `target` (relative to the fixture file), when present. */
export function fixtureTarget(raw: JsonValue): string | undefined {
  if (!isJsonObject(raw)) return undefined;
  if (raw.target !== undefined && typeof raw.target !== "string") {
    throw invalid("target", "must be a path relative to the fixture file");
  }
  return raw.target;
}
