/**
 * Upstream's harness contracts: a runner manifest's inline `harness:` block
 * (`RunnerHarnessManifest`) and a conventional harness fixture document
 * (`parser.validateHarnessFixtureYaml`, `HarnessFixture`). Both are read the way upstream's
 * strict deserializer reads them (unknown fields, missing fields and wrong types worded as it
 * words them), then checked with upstream's sentences, and answered in its normal form (every
 * optional expectation field present, null when absent). Pure.
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
  serdeKind,
} from "./fields.js";

/** A deserializer failure in upstream's words (`missing field`, `unknown field`, …). */
export class SerdeError extends Error {}

/** A value read as a string field (already checked as one). */
const text = (value: JsonValue | undefined): string => (typeof value === "string" ? value : "");

const fail = (message: string): never => {
  throw new SerdeError(message);
};

const ticks = (names: readonly string[]): string => {
  const quoted = names.map((name) => `\`${name}\``);
  if (quoted.length === 1) return quoted[0] ?? "";
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(", ")}`;
};

/** How one field is read: its reader gets the value (undefined when absent). */
type Reader = (value: JsonValue | undefined) => JsonValue | undefined;

/** A struct with these fields, unknown ones refused (`deny_unknown_fields`) unless `open`. */
function struct(
  name: string,
  fields: Record<string, Reader>,
  value: JsonValue | undefined,
  open = false,
): JsonObject {
  if (!isJsonObject(value))
    return fail(`invalid type: ${serdeKind(value ?? null)}, expected struct ${name}`);
  const names = Object.keys(fields);
  const out: JsonObject = {};
  // Keys are read in the mapping's (sorted) order; absent fields take their defaults after.
  for (const key of Object.keys(value).sort()) {
    const reader = fields[key];
    if (reader === undefined) {
      if (open) continue;
      fail(`unknown field \`${key}\`, expected ${ticks(names)}`);
    } else {
      const read = reader(value[key]);
      if (read !== undefined) out[key] = read;
    }
  }
  for (const key of names) {
    const reader = fields[key];
    if (reader === undefined || key in value) continue;
    const read = reader(undefined);
    if (read !== undefined) out[key] = read;
  }
  return out;
}

const required =
  (name: string, reader: Reader): Reader =>
  (value) =>
    value === undefined ? fail(`missing field \`${name}\``) : reader(value);

const string: Reader = (value) =>
  typeof value === "string"
    ? value
    : fail(`invalid type: ${serdeKind(value ?? null)}, expected a string`);

const option =
  (reader: Reader): Reader =>
  (value) =>
    value === undefined || value === null ? null : reader(value);

const skipNone =
  (reader: Reader): Reader =>
  (value) =>
    value === undefined || value === null ? undefined : reader(value);

const list =
  (reader: Reader, skipEmpty = false): Reader =>
  (value) => {
    if (value === undefined) return skipEmpty ? undefined : [];
    if (!Array.isArray(value))
      return fail(`invalid type: ${serdeKind(value)}, expected a sequence`);
    const items = value.map((item) => reader(item) ?? null);
    return skipEmpty && items.length === 0 ? undefined : items;
  };

const variant =
  (allowed: readonly string[]): Reader =>
  (value) => {
    if (typeof value !== "string")
      return fail(
        `invalid type: ${serdeKind(value ?? null)}, expected ${allowed.length === 1 ? `\`${allowed[0]}\`` : "a string"}`,
      );
    return allowed.includes(value)
      ? value
      : fail(`unknown variant \`${value}\`, expected ${ticks(allowed)}`);
  };

const anyValue: Reader = (value) => (value === undefined ? undefined : value);
const map: Reader = (value) =>
  value === undefined
    ? {}
    : isJsonObject(value)
      ? value
      : fail(`invalid type: ${serdeKind(value)}, expected a map`);

const count: Reader = (value) =>
  typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : fail(`invalid type: ${serdeKind(value ?? null)}, expected usize`);

const stringMap: Reader = (value) => {
  if (value === undefined) return {};
  if (!isJsonObject(value)) return fail(`invalid type: ${serdeKind(value)}, expected a map`);
  for (const key of Object.keys(value).sort()) string(value[key]);
  return value;
};

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

/** A harness failure as upstream words it (`invalid harness fixture <field>: …`). */
const harnessInvalid = (field: string, message: string): never =>
  fail(`invalid harness fixture ${field}: ${message}`);

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

/** Exact HTTP responses a harness serves (`caller.http_responses`). */
function httpResponses(value: JsonValue | undefined, field: string): JsonObject {
  if (value === undefined) return {};
  const wrap = (body: () => JsonObject): JsonObject => {
    try {
      return body();
    } catch (error) {
      if (error instanceof SerdeError && !error.message.startsWith("invalid harness fixture"))
        return harnessInvalid(field, error.message);
      throw error;
    }
  };
  const responses = wrap(() => {
    if (!isJsonObject(value)) return fail(`invalid type: ${serdeKind(value)}, expected a map`);
    const out: JsonObject = {};
    for (const url of Object.keys(value).sort())
      out[url] = struct(
        "HarnessHttpResponseFixture",
        {
          status: required("status", (v) =>
            typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535
              ? v
              : fail(`invalid type: ${serdeKind(v ?? null)}, expected u16`),
          ),
          headers: (v) => {
            const headers = stringMap(v);
            return isJsonObject(headers) && Object.keys(headers).length === 0 ? undefined : headers;
          },
          body: required("body", string),
        },
        value[url],
      );
    return out;
  });
  const urls = Object.keys(responses);
  if (urls.length === 0)
    harnessInvalid(field, "must contain at least one exact response when declared");
  if (urls.length > 32) harnessInvalid(field, "must contain at most 32 responses");
  for (const url of urls) {
    const at = `${field}.${url}`;
    const response = responses[url] as JsonObject;
    if (
      url.length > 2048 ||
      /\s/.test(url) ||
      !(url.startsWith("https://") || url.startsWith("http://"))
    )
      harnessInvalid(
        at,
        "key must be an exact absolute HTTP(S) URL no longer than 2048 characters",
      );
    const status = typeof response.status === "number" ? response.status : 0;
    if (status < 100 || status > 599)
      harnessInvalid(`${at}.status`, "must be an HTTP status from 100 through 599");
    const headers = isJsonObject(response.headers) ? response.headers : {};
    if (Object.keys(headers).length > 64)
      harnessInvalid(`${at}.headers`, "must contain at most 64 headers");
    if (
      Object.entries(headers).some(
        ([name, v]) =>
          name === "" ||
          name.length > 256 ||
          text(v).length > 8192 ||
          /[\r\n]/.test(name) ||
          /[\r\n]/.test(text(v)),
      )
    )
      harnessInvalid(
        `${at}.headers`,
        "header names and values must be bounded single-line strings",
      );
    if (Buffer.byteLength(text(response.body), "utf8") > 1_048_576)
      harnessInvalid(`${at}.body`, "must be no larger than 1048576 UTF-8 bytes");
  }
  return responses;
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

function receiptPaths(value: JsonValue | undefined): JsonObject {
  const setup = struct(
    "HarnessSetup",
    { receipts: list(string) },
    value === undefined ? {} : value,
  );
  const receipts = Array.isArray(setup.receipts) ? setup.receipts : [];
  if (receipts.length > 32)
    harnessInvalid("setup.receipts", "must contain at most 32 receipt files");
  const seen = new Set<string>();
  receipts.forEach((entry, index) => {
    const path = text(entry);
    const at = `setup.receipts[${index}]`;
    if (
      path === "" ||
      path.length > 512 ||
      path.startsWith("/") ||
      path.includes("\\") ||
      !path.endsWith(".json") ||
      path.split("/").some((segment) => segment === "" || segment === "." || segment === "..")
    )
      harnessInvalid(at, "must be a normalized package-relative .json path");
    if (seen.has(path)) harnessInvalid(at, "must not duplicate another receipt path");
    seen.add(path);
  });
  return { receipts };
}

const FIXTURE_KINDS = ["skill", "graph", "mcp", "a2a", "agent", "agent_task"];

function providerResponses(value: JsonValue | undefined, field: string): void {
  if (value === undefined) return;
  let fixture: JsonObject;
  try {
    fixture = struct(
      "HarnessProviderResponsesFixture",
      {
        principal_id: required("principal_id", string),
        grants: required(
          "grants",
          list((grant) =>
            struct(
              "HarnessProviderGrantFixture",
              {
                grant_id: required("grant_id", string),
                provider: required("provider", string),
                scopes: required("scopes", list(string)),
              },
              grant,
            ),
          ),
        ),
        operations: required(
          "operations",
          list((operation) =>
            struct(
              "HarnessProviderOperationFixture",
              {
                grant_id: required("grant_id", string),
                operation: required("operation", string),
                target: required("target", string),
                access: required("access", variant(["read", "mutate"])),
                result: required("result", anyValue),
              },
              operation,
            ),
          ),
        ),
      },
      value,
    );
  } catch (error) {
    if (error instanceof SerdeError) return harnessInvalid(field, error.message);
    throw error;
  }
  const principal = text(fixture.principal_id);
  if (principal.trim() === "" || principal.length > 256)
    harnessInvalid(
      `${field}.principal_id`,
      "must be a non-empty principal id no longer than 256 characters",
    );
  const grants = fixture.grants as JsonObject[];
  const operations = fixture.operations as JsonObject[];
  if (grants.length === 0 || grants.length > 16)
    harnessInvalid(`${field}.grants`, "must contain between 1 and 16 grants");
  if (operations.length === 0 || operations.length > 32)
    harnessInvalid(`${field}.operations`, "must contain between 1 and 32 operations");
  const ids = new Set<string>();
  grants.forEach((grant, index) => {
    const at = `${field}.grants[${index}]`;
    const scopes = Array.isArray(grant.scopes) ? grant.scopes.map(text) : [];
    if (
      text(grant.grant_id).trim() === "" ||
      text(grant.provider).trim() === "" ||
      scopes.length === 0 ||
      scopes.some((scope) => scope.trim() === "")
    )
      harnessInvalid(at, "grant_id, provider, and every declared scope must be non-empty");
    const id = text(grant.grant_id);
    if (ids.has(id)) harnessInvalid(at, `duplicates grant id ${JSON.stringify(id)}`);
    ids.add(id);
  });
  const seen = new Set<string>();
  operations.forEach((operation, index) => {
    const at = `${field}.operations[${index}]`;
    if (!ids.has(text(operation.grant_id)))
      harnessInvalid(`${at}.grant_id`, "must reference a declared harness grant");
    if (text(operation.operation).trim() === "" || text(operation.target).trim() === "")
      harnessInvalid(at, "operation and target must be non-empty");
    const identity = JSON.stringify([
      operation.grant_id,
      operation.operation,
      operation.target,
      operation.access,
    ]);
    if (seen.has(identity))
      harnessInvalid(at, "duplicates an earlier grant, operation, target, and access tuple");
    seen.add(identity);
  });
}

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
