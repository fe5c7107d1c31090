/**
 * Upstream's harness contracts: a runner manifest's inline `harness:` block
 * (`RunnerHarnessManifest`) and a conventional harness fixture document
 * (`parser.validateHarnessFixtureYaml`, `HarnessFixture`). Both are read the way upstream's
 * strict deserializer reads them (unknown fields, missing fields and wrong types worded as it
 * words them), then checked with upstream's sentences, and answered in its normal form (every
 * optional expectation field present, null when absent). The serde-style readers are
 * parser-eval/serde.ts; the replay lanes' checks are parser-eval/harness-lanes.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalNonEmptyString,
  optionalObject,
  optionalStringArray,
  rejectUnknownFields,
  requiredObject,
  requiredString,
} from "./fields.js";
import { httpResponses, providerResponses, receiptPaths } from "./harness-lanes.js";
import {
  SerdeError,
  anyValue,
  count,
  fail,
  harnessInvalid,
  list,
  map,
  option,
  required,
  skipNone,
  string,
  stringMap,
  struct,
  text,
  variant,
} from "./serde.js";
import type { Reader } from "./serde.js";

const STATUSES = ["sealed", "failure", "needs_agent", "policy_denied", "escalated"];
const DISPOSITIONS = [
  "closed",
  "deferred",
  "superseded",
  "declined",
  "blocked",
  "failed",
  "killed",
  "timed_out",
];
const RETIRED_RECEIPT_FIELDS = [
  "kind",
  "skill_name",
  "source_type",
  "graph_name",
  "owner",
  "skill_execution",
  "graph_execution",
];

function jsonExpectation(value: JsonValue | undefined, field: string): JsonObject {
  const read = struct(
    "HarnessJsonExpectation",
    { exact: option(anyValue), subset: option(anyValue) },
    value,
  );
  if (read.exact === null && read.subset === null)
    fail(`harness fixture ${field}.exact or ${field}.subset is required`);
  return read;
}

const RECEIPT_FIELDS: Record<string, Reader> = {
  schema: (value) =>
    value === undefined ? "runx.receipt.v1" : variant(["runx.receipt.v1"])(value),
  body_digest: option(string),
  receipt_id: option(string),
  receipt_digest: option(string),
  harness_id: option(string),
  state: option(string),
  disposition: option(variant(DISPOSITIONS)),
  reason_code: option(string),
  act_ids: list(string),
  decision_ids: list(string),
  child_receipt_refs: list(string),
  child_receipt_count: option(count),
  verification_refs: list(string),
};

function receiptExpectation(value: JsonValue | undefined): JsonValue {
  if (value === undefined || value === null) return null;
  const read = struct("RawReceiptExpectation", RECEIPT_FIELDS, value, true);
  const extra = Object.keys(value as JsonObject)
    .sort()
    .find((key) => !(key in RECEIPT_FIELDS));
  if (extra !== undefined)
    fail(
      `${RETIRED_RECEIPT_FIELDS.includes(extra) ? "retired" : "unknown"} receipt expectation field expect.receipt.${extra}`,
    );
  return read;
}

/** A harness expectation (`HarnessExpectation`). */
function expectation(value: JsonValue | undefined): JsonObject {
  const raw = value === undefined ? {} : value;
  const read = struct(
    "RawHarnessExpectation",
    {
      status: option(variant(STATUSES)),
      receipt: anyValue,
      steps: list(string),
      output: anyValue,
      step_outputs: map,
    },
    raw,
  );
  const record = raw as JsonObject;
  const output =
    record.output === undefined || record.output === null
      ? null
      : jsonExpectation(record.output, "expect.output");
  const stepOutputs: JsonObject = {};
  const steps = isJsonObject(read.step_outputs) ? read.step_outputs : {};
  for (const step of Object.keys(steps).sort())
    stepOutputs[step] = jsonExpectation(steps[step], `expect.step_outputs.${step}`);
  return {
    status: read.status ?? null,
    receipt: receiptExpectation(record.receipt),
    steps: read.steps ?? [],
    output,
    step_outputs: stepOutputs,
  };
}

/** An operator journey claim (`OperatorJourneyClaim`). */
function operatorJourney(value: JsonValue | undefined): JsonObject {
  const claim = struct(
    "OperatorJourneyClaim",
    {
      mode: required("mode", variant(["standalone", "composed", "refusal"])),
      request: required("request", string),
      expected_outcome: required("expected_outcome", string),
      exercises_runner: skipNone(string),
      confusors: list(string, true),
      prior_evidence: list(string, true),
      must_not_repeat: list(string, true),
    },
    value,
  );
  for (const field of ["request", "expected_outcome"])
    if (text(claim[field]).trim() === "")
      fail(`harness fixture operator_journey.${field} is required`);
  const entries = ["confusors", "prior_evidence", "must_not_repeat"].flatMap((key) => {
    const v = claim[key];
    return Array.isArray(v) ? v : [];
  });
  if (entries.some((entry) => text(entry).trim() === ""))
    harnessInvalid(
      "operator_journey",
      "confusors, prior_evidence, and must_not_repeat entries must not be empty",
    );
  if (typeof claim.exercises_runner === "string" && claim.exercises_runner.trim() === "")
    harnessInvalid(
      "operator_journey.exercises_runner",
      "must be a non-empty runner name when declared",
    );
  if (
    claim.mode === "composed" &&
    (claim.prior_evidence === undefined || claim.must_not_repeat === undefined)
  )
    harnessInvalid(
      "operator_journey",
      "composed journeys require prior_evidence and must_not_repeat assertions",
    );
  return claim;
}

/** Upstream's own harness sentences; anything else is a deserializer reason it wraps. */
const isHarnessSentence = (message: string): boolean =>
  message.startsWith("invalid harness fixture") ||
  message.startsWith("harness fixture") ||
  message.includes("receipt expectation field");

/**
 * Runs a harness read inside a runner manifest: upstream reports it as `<field>: <reason>`,
 * a deserializer reason wrapped as `invalid harness fixture <part>: …`.
 */
function located<T>(field: string, part: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (!(error instanceof SerdeError)) throw error;
    const reason = isHarnessSentence(error.message)
      ? error.message
      : `invalid harness fixture ${part}: ${error.message}`;
    return invalid(`${field}: ${reason}`);
  }
}

const RUNTIME_OWNED_ENV = ["RUNX_CWD", "RUNX_RECEIPT_DIR"];

function harnessCase(value: JsonObject, field: string): JsonObject {
  rejectUnknownFields(value, field, [
    "name",
    "runner",
    "inputs",
    "env",
    "caller",
    "expect",
    "operator_journeys",
  ]);
  const name = requiredString(value.name, `${field}.name`);
  const runner = optionalNonEmptyString(value.runner, `${field}.runner`);
  const inputs = optionalObject(value.inputs, `${field}.inputs`) ?? {};
  const envRecord = optionalObject(value.env, `${field}.env`) ?? {};
  const env: JsonObject = {};
  for (const key of Object.keys(envRecord).sort()) {
    if (RUNTIME_OWNED_ENV.includes(key))
      invalid(
        `${field}.env.${key} is owned by the isolated harness runtime and cannot be overridden.`,
      );
    const entry = envRecord[key];
    if (typeof entry !== "string") return invalid(`${field}.env.${key} must be a string.`);
    env[key] = entry;
  }
  const callerField = `${field}.caller`;
  const callerRecord = optionalObject(value.caller, callerField) ?? {};
  rejectUnknownFields(callerRecord, callerField, ["answers", "approvals", "http_responses"]);
  const answers = optionalObject(callerRecord.answers, `${callerField}.answers`);
  const approvalsRecord = optionalObject(callerRecord.approvals, `${callerField}.approvals`) ?? {};
  const approvals: JsonObject = {};
  for (const key of Object.keys(approvalsRecord).sort()) {
    const entry = approvalsRecord[key];
    if (typeof entry !== "boolean")
      return invalid(`${callerField}.approvals.${key} must be a boolean.`);
    approvals[key] = entry;
  }
  let responses: JsonObject;
  try {
    responses = httpResponses(callerRecord.http_responses, `${callerField}.http_responses`);
  } catch (error) {
    if (error instanceof SerdeError) return invalid(error.message);
    throw error;
  }
  const caller: JsonObject = { approvals };
  if (answers !== undefined) caller.answers = answers;
  if (Object.keys(responses).length > 0) caller.http_responses = responses;
  const expect = requiredObject(value.expect, `${field}.expect`);
  const expected = located(`${field}.expect`, "expect", () => expectation(expect));
  let journeys: JsonObject[] = [];
  const journeysField = `${field}.operator_journeys`;
  if (value.operator_journeys !== undefined) {
    const list = value.operator_journeys;
    if (list === null) invalid(`${journeysField} is required.`);
    if (!Array.isArray(list)) return invalid(`${journeysField} must be an array.`);
    journeys = list.map((entry, index) => {
      const at = `${journeysField}[${index}]`;
      const object = requiredObject(entry, at);
      return located(at, "operator_journey", () => operatorJourney(object));
    });
  }
  const out: JsonObject = { name, inputs, env, caller, expect: expected };
  if (runner !== undefined) out.runner = runner;
  if (journeys.length > 0) out.operator_journeys = journeys;
  return out;
}

/** A runner manifest's `harness:` block (absent → undefined). */
export function harnessManifest(
  value: JsonObject | undefined,
  field: string,
): JsonObject | undefined {
  if (value === undefined) return undefined;
  rejectUnknownFields(value, field, ["files", "cases"]);
  const files = optionalStringArray(value.files, `${field}.files`) ?? [];
  const casesField = `${field}.cases`;
  const cases = value.cases;
  if (cases === undefined || cases === null) return invalid(`${casesField} is required.`);
  if (!Array.isArray(cases)) return invalid(`${casesField} must be an array.`);
  const out: JsonObject = {
    cases: cases.map((entry, index) =>
      harnessCase(requiredObject(entry, `${casesField}[${index}]`), `${casesField}[${index}]`),
    ),
  };
  if (files.length > 0) out.files = files;
  return out;
}

const FIXTURE_KINDS = ["skill", "graph", "mcp", "a2a", "agent", "agent_task"];

/**
 * A harness fixture document (already parsed from YAML) in upstream's normal form. Throws
 * SerdeError with upstream's sentence (the caller adds upstream's parse prefix when needed).
 */
export function harnessFixture(document: JsonValue): JsonObject {
  const raw = struct(
    "RawHarnessFixture",
    {
      name: required("name", string),
      kind: required("kind", variant(FIXTURE_KINDS)),
      target: option(string),
      runner: option(string),
      setup: anyValue,
      inputs: map,
      env: stringMap,
      caller: map,
      expect: anyValue,
      operator_journeys: list((entry) => entry),
      metadata: map,
    },
    document,
  );
  const record = document as JsonObject;
  if (raw.name === "") fail("harness fixture name must not be empty");
  if (raw.kind === "mcp")
    fail("harness fixture mode mcp at kind is not yet supported by the Rust harness");
  const target = typeof raw.target === "string" ? raw.target : "";
  if (raw.kind !== "agent_task" && target === "") fail("harness fixture target must not be empty");
  if (raw.runner === "") fail("harness fixture runner must not be empty");
  const caller = isJsonObject(raw.caller) ? raw.caller : {};
  if ("web_responses" in caller)
    harnessInvalid("caller.web_responses", "was renamed to caller.http_responses");
  httpResponses(caller.http_responses, "caller.http_responses");
  providerResponses(caller.provider_responses, "caller.provider_responses");
  const setup = receiptPaths(record.setup);
  const expect = expectation(record.expect);
  const journeys = (Array.isArray(raw.operator_journeys) ? raw.operator_journeys : []).map(
    operatorJourney,
  );
  return {
    name: raw.name ?? "",
    kind: raw.kind ?? "",
    target,
    runner: raw.runner ?? null,
    setup,
    inputs: raw.inputs ?? {},
    env: raw.env ?? {},
    caller,
    expect,
    operator_journeys: journeys,
    metadata: raw.metadata ?? {},
  };
}
