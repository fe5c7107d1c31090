/**
 * The `runx.operational_policy.v1` document and its strict reader. The reader admits exactly
 * upstream's shape: every object closed (an unknown field is refused), required fields
 * present, enums spelled as upstream spells them, identifiers and non-empty strings non-empty,
 * and `null` accepted only where upstream reads an optional value. It reports the first
 * mismatch the way upstream's reader meets it: an object's fields in sorted key order, then
 * the required fields it lacks in declaration order; the wording of each reason is upstream's.
 * Where upstream's reader names a byte column of its own re-serialisation, this one names the
 * JSON pointer of the value. Two laxities of that reader are not carried over (docs/tools.md,
 * "Policy tools"): an object written as an array of its field values, and an enum written as
 * a one-key object, are both refused here.
 */
import { findDeepNesting } from "../../parser/nesting.js";
import { serdeKind } from "../../parser-eval/fields.js";
import { ticks } from "../../parser-eval/serde.js";
import type { Json, JsonRecord } from "../types.js";

/** The actions a source, runner or target may allow, in upstream's order (coverage order). */
export const POLICY_ACTIONS = [
  "reply-only",
  "issue-intake",
  "work-plan",
  "issue-to-pr",
  "manual-review",
  "pr-review",
  "pr-fix-up",
  "merge-assist",
] as const;

/** One operational action. */
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** A runner's state. */
export type RunnerState = "available" | "disabled" | "maintenance";
/** How a source thread is published to. */
export type PublishMode = "reply" | "comment" | "none";
/** When the source issue closes. */
export type CloseMode = "never" | "when_verified" | "when_terminal";

/** One source of work and what it may start. */
export interface SourceRule {
  source_id: string;
  provider: string;
  allowed_locators: string[];
  allowed_actions: PolicyAction[];
  source_thread: { required: boolean; publish_mode: PublishMode; missing_behavior: "fail_closed" };
  minimum_confidence?: number;
  adapter_policy: JsonRecord;
}

/** One runner and where it may work. */
export interface RunnerRule {
  runner_id: string;
  kind: string;
  state: RunnerState;
  allowed_actions: PolicyAction[];
  target_repos: string[];
  scafld_required: boolean;
}

/** Who owns which repositories. */
export interface OwnerRoute {
  route_id: string;
  owners: string[];
  target_repos: string[];
  labels: string[];
  project?: string;
}

/** One target repository and the runners and actions it admits. */
export interface TargetRule {
  repo: string;
  runner_ids: string[];
  allowed_actions: PolicyAction[];
  default_owner_route: string;
  scafld_required: boolean;
  base_branch?: string;
}

/** Outcome rules. */
export interface OutcomePolicy {
  observe_provider: boolean;
  verification_required: boolean;
  close_source_issue: CloseMode;
  publish_final_source_thread_update: boolean;
}

/** Automation permissions. */
export interface AutomationPermissions {
  auto_merge: boolean;
  mutate_target_repo: boolean;
  require_human_merge_gate: boolean;
}

/** A `runx.operational_policy.v1` document as the reader admits it. */
export interface OperationalPolicy {
  schema: "runx.operational_policy.v1";
  schema_version: "runx.operational_policy.v1";
  policy_id: string;
  created_at?: string;
  sources: SourceRule[];
  runners: RunnerRule[];
  owner_routes: OwnerRoute[];
  targets: TargetRule[];
  dedupe: {
    strategy: "source_fingerprint" | "provider_search" | "branch";
    key_fields: string[];
    on_duplicate: "reuse" | "comment" | "block";
  };
  outcomes: OutcomePolicy;
  permissions: AutomationPermissions;
}

/** The reader's verdict: the policy, or the first mismatch and where it is. */
export type ReadPolicy =
  { ok: true; policy: OperationalPolicy } | { ok: false; reason: string; pointer: string };

/** Upstream's reader refuses containers nested this deep (the policy object is level 1). */
const RECURSION_LIMIT = 128;

class Mismatch extends Error {
  constructor(
    readonly reason: string,
    readonly pointer: string,
  ) {
    super(reason);
  }
}

interface At {
  pointer: string;
  /** Containers entered so far, the value's own not included. */
  depth: number;
}

type Reader<T> = (value: Json, at: At) => T;

function isObject(value: Json): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalidType(value: Json, expected: string, at: At): Mismatch {
  return new Mismatch(`invalid type: ${serdeKind(value)}, expected ${expected}`, at.pointer);
}

function child(at: At, key: string | number): At {
  const token = String(key).replaceAll("~", "~0").replaceAll("/", "~1");
  return { pointer: `${at.pointer}/${token}`, depth: at.depth + 1 };
}

/** Keys in the order upstream's reader meets them: by Unicode code point (its byte order). */
function sortedKeys(record: JsonRecord): string[] {
  return Object.keys(record).sort((a, b) => {
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
      const d = (x[i]!.codePointAt(0) ?? 0) - (y[i]!.codePointAt(0) ?? 0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  });
}

const text: Reader<string> = (value, at) => {
  if (typeof value !== "string") throw invalidType(value, "a string", at);
  return value;
};

const nonEmpty: Reader<string> = (value, at) => {
  const read = text(value, at);
  if (read === "") throw new Mismatch("string must be non-empty", at.pointer);
  return read;
};

const dateTime: Reader<string> = (value, at) => {
  const read = text(value, at);
  if (read === "") throw new Mismatch("datetime must be non-empty", at.pointer);
  return read;
};

const flag: Reader<boolean> = (value, at) => {
  if (typeof value !== "boolean") throw invalidType(value, "a boolean", at);
  return value;
};

const float: Reader<number> = (value, at) => {
  if (typeof value !== "number") throw invalidType(value, "f64", at);
  return value;
};

function variant<T extends string>(names: readonly T[]): Reader<T> {
  return (value, at) => {
    if (typeof value !== "string") throw invalidType(value, "variant identifier", at);
    if (!(names as readonly string[]).includes(value)) {
      throw new Mismatch(`unknown variant \`${value}\`, expected ${ticks(names)}`, at.pointer);
    }
    return value as T;
  };
}

function list<T>(item: Reader<T>): Reader<T[]> {
  return (value, at) => {
    if (!Array.isArray(value)) throw invalidType(value, "a sequence", at);
    return value.map((entry, index) => item(entry, child(at, index)));
  };
}

/**
 * Any JSON value, refused only past the recursion limit. The adapter bag is the one place a
 * policy's depth is the author's: every other container sits at a fixed depth well inside it.
 */
const anyJson: Reader<Json> = (value, at) => {
  if (findDeepNesting(value, RECURSION_LIMIT - 1 - at.depth) !== undefined) {
    throw new Mismatch("recursion limit exceeded", at.pointer);
  }
  return value;
};

/** A map with non-empty keys (upstream's `adapter_policy` bag). */
const adapterBag: Reader<JsonRecord> = (value, at) => {
  if (!isObject(value)) throw invalidType(value, "a map", at);
  const out: JsonRecord = {};
  for (const key of sortedKeys(value)) {
    if (key === "") throw new Mismatch("string must be non-empty", at.pointer);
    out[key] = anyJson(value[key]!, child(at, key));
  }
  return out;
};

interface Field {
  name: string;
  read: Reader<unknown>;
  /** `option`: may be absent or null; `default`: may be absent, then `fallback()`. */
  absent?: "option" | "default";
  fallback?: () => unknown;
}

const required = (name: string, read: Reader<unknown>): Field => ({ name, read });
const optional = (name: string, read: Reader<unknown>): Field => ({ name, read, absent: "option" });
const defaulted = (name: string, read: Reader<unknown>, fallback: () => unknown): Field => ({
  name,
  read,
  absent: "default",
  fallback,
});

function struct<T>(name: string, fields: readonly Field[]): Reader<T> {
  const names = fields.map((field) => field.name);
  return (value, at) => {
    if (!isObject(value)) throw invalidType(value, `struct ${name}`, at);
    const out: Record<string, unknown> = {};
    for (const key of sortedKeys(value)) {
      const field = fields.find((candidate) => candidate.name === key);
      if (field === undefined) {
        throw new Mismatch(`unknown field \`${key}\`, expected ${ticks(names)}`, at.pointer);
      }
      const entry = value[key]!;
      if (field.absent === "option" && entry === null) continue;
      out[key] = field.read(entry, child(at, key));
    }
    for (const field of fields) {
      if (Object.hasOwn(out, field.name) || field.absent === "option") continue;
      if (field.absent === "default") out[field.name] = field.fallback?.();
      else throw new Mismatch(`missing field \`${field.name}\``, at.pointer);
    }
    return out as T;
  };
}

const SCHEMA_ID = "runx.operational_policy.v1";
const actions = list(variant(POLICY_ACTIONS));

const sourceRule = struct<SourceRule>("OperationalPolicySourceRule", [
  required("source_id", nonEmpty),
  required("provider", nonEmpty),
  required("allowed_locators", list(nonEmpty)),
  required("allowed_actions", actions),
  required(
    "source_thread",
    struct("OperationalPolicySourceThreadPolicy", [
      required("required", flag),
      required("publish_mode", variant(["reply", "comment", "none"])),
      required("missing_behavior", variant(["fail_closed"])),
    ]),
  ),
  optional("minimum_confidence", float),
  defaulted("adapter_policy", adapterBag, () => ({})),
]);

const runnerRule = struct<RunnerRule>("OperationalPolicyRunnerRule", [
  required("runner_id", nonEmpty),
  required("kind", nonEmpty),
  required("state", variant(["available", "disabled", "maintenance"])),
  required("allowed_actions", actions),
  required("target_repos", list(text)),
  required("scafld_required", flag),
]);

const ownerRoute = struct<OwnerRoute>("OperationalPolicyOwnerRoute", [
  required("route_id", nonEmpty),
  required("owners", list(nonEmpty)),
  required("target_repos", list(text)),
  defaulted("labels", list(nonEmpty), () => []),
  optional("project", nonEmpty),
]);

const targetRule = struct<TargetRule>("OperationalPolicyTargetRule", [
  required("repo", text),
  required("runner_ids", list(nonEmpty)),
  required("allowed_actions", actions),
  required("default_owner_route", nonEmpty),
  required("scafld_required", flag),
  optional("base_branch", nonEmpty),
]);

const policyReader = struct<OperationalPolicy>("OperationalPolicy", [
  required("schema", variant([SCHEMA_ID])),
  required("schema_version", variant([SCHEMA_ID])),
  required("policy_id", nonEmpty),
  optional("created_at", dateTime),
  required("sources", list(sourceRule)),
  required("runners", list(runnerRule)),
  required("owner_routes", list(ownerRoute)),
  required("targets", list(targetRule)),
  required(
    "dedupe",
    struct("OperationalPolicyDedupePolicy", [
      required("strategy", variant(["source_fingerprint", "provider_search", "branch"])),
      required("key_fields", list(nonEmpty)),
      required("on_duplicate", variant(["reuse", "comment", "block"])),
    ]),
  ),
  required(
    "outcomes",
    struct("OperationalPolicyOutcomePolicy", [
      required("observe_provider", flag),
      required("verification_required", flag),
      required("close_source_issue", variant(["never", "when_verified", "when_terminal"])),
      required("publish_final_source_thread_update", flag),
    ]),
  ),
  required(
    "permissions",
    struct("OperationalPolicyAutomationPermissions", [
      required("auto_merge", flag),
      required("mutate_target_repo", flag),
      required("require_human_merge_gate", flag),
    ]),
  ),
]);

/** Reads one candidate document; never throws for any JSON value. */
export function readOperationalPolicy(document: Json): ReadPolicy {
  try {
    return { ok: true, policy: policyReader(document, { pointer: "", depth: 0 }) };
  } catch (error) {
    if (!(error instanceof Mismatch)) throw error;
    return { ok: false, reason: error.reason, pointer: error.pointer };
  }
}
