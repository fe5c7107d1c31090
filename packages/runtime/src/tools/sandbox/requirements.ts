/**
 * Reading a workload's sandbox requirements for `sandbox.plan`: its identity (exactly one of
 * `image_digest` / `skill_ref`), the provenance and freshness of its requirements, and the
 * narrowest declaration they admit, checked against the caller's baseline ceilings. Problems
 * the plan can report become findings; fields of the wrong type are INPUT_INVALID. Pure.
 */
import { isAbsolute } from "node:path";
import { RuntimeError } from "../../errors.js";
import { compareCodePoints } from "../../receipts/canonical.js";
import { isRecord } from "../packet.js";
import type { Json, JsonRecord } from "../types.js";
import type { CwdPolicy, SandboxDeclaration } from "./admission.js";

const TOOL = "sandbox.plan";
const MAX_ITEMS = 100;

/** One plan finding. */
export interface PlanFinding {
  code: string;
  message: string;
}

function invalid(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${TOOL}: ${message}`, { path });
}

/** A trimmed non-empty string field, else undefined. */
export function optionalText(object: JsonRecord, field: string): string | undefined {
  const value = object[field];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** An object field (absent or null is empty); another type is INPUT_INVALID. */
export function optionalObject(object: JsonRecord, field: string): JsonRecord {
  const value = object[field];
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw invalid(`${field} must be an object`, field);
  return value;
}

function boolean(object: JsonRecord, field: string, fallback: boolean): boolean {
  const value = object[field];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw invalid(`${field} must be boolean`, field);
  return value;
}

/** A set of non-empty strings, sorted and deduplicated; undefined when absent. */
export function optionalStrings(object: JsonRecord, field: string): string[] | undefined {
  const value = object[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalid(`${field} must be an array`, field);
  if (value.length > MAX_ITEMS) throw invalid(`${field} exceeds ${MAX_ITEMS} items`, field);
  const unique = new Set<string>();
  for (const item of value) {
    if (typeof item !== "string" || item.trim() === "") {
      throw invalid(`${field} must contain non-empty strings`, field);
    }
    unique.add(item.trim());
  }
  return [...unique].sort(compareCodePoints);
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Whole seconds since the epoch of an RFC 3339 timestamp, or undefined. */
export function rfc3339Seconds(value: string): number | undefined {
  const match = RFC3339.exec(value.trim());
  if (match === null) return undefined;
  const millis = Date.parse(value.trim().toUpperCase());
  if (Number.isNaN(millis)) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const probe = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 0, hour, minute, second));
  // Date.parse rolls 31 February over to March; a real timestamp names a real day.
  if (probe.getUTCDate() !== day || (second ?? 0) > 59) return undefined;
  return Math.floor(millis / 1000);
}

/** The workload identity block. */
export function inspectIdentity(workload: JsonRecord, findings: PlanFinding[]): JsonRecord {
  const imageDigest = optionalText(workload, "image_digest");
  const skillRef = optionalText(workload, "skill_ref");
  if ((imageDigest !== undefined) === (skillRef !== undefined)) {
    findings.push({
      code: "sandbox.workload.identity",
      message: "workload requires exactly one image_digest or skill_ref",
    });
  }
  if (imageDigest !== undefined && !/^sha256:[0-9a-f]{64}$/.test(imageDigest)) {
    findings.push({
      code: "sandbox.workload.digest",
      message: "image_digest must be a lowercase sha256 digest",
    });
  }
  return {
    ref_form:
      imageDigest !== undefined ? "image_digest" : skillRef !== undefined ? "skill_ref" : "",
    image_digest: imageDigest ?? "",
    skill_ref: skillRef ?? "",
    class: optionalText(workload, "class") ?? "",
  };
}

function timeField(
  value: string | undefined,
  field: string,
  findings: PlanFinding[],
): number | undefined {
  if (value === undefined) {
    findings.push({ code: "sandbox.time.missing", message: `${field} is required` });
    return undefined;
  }
  const seconds = rfc3339Seconds(value);
  if (seconds === undefined) {
    findings.push({ code: "sandbox.time.invalid", message: `${field} must be RFC3339` });
  }
  return seconds;
}

/** The requirements' provenance, with freshness checked against `as_of`. */
export function inspectSourceEvidence(options: {
  asOf: string;
  maxAgeDays: number;
  requirements: JsonRecord;
  findings: PlanFinding[];
}): JsonRecord {
  const { requirements, findings } = options;
  const asOf = rfc3339Seconds(options.asOf);
  if (asOf === undefined) {
    findings.push({ code: "sandbox.time.invalid", message: "as_of must be RFC3339" });
  }
  if (!(options.maxAgeDays > 0 && options.maxAgeDays <= 3650)) {
    findings.push({
      code: "sandbox.requirements.max_age",
      message: "max_age_days must be greater than zero and at most 3650",
    });
  }
  const sourceRef = optionalText(requirements, "source_ref") ?? "";
  const sourceDigest = optionalText(requirements, "source_digest") ?? "";
  const observedText = optionalText(requirements, "observed_at");
  const observedAt = timeField(observedText, "observed_at", findings);
  if (sourceRef === "" || !/^sha256:[0-9a-f]{64}$/.test(sourceDigest)) {
    findings.push({
      code: "sandbox.requirements.provenance",
      message: "requirements require source_ref and source_digest",
    });
  }
  if (asOf !== undefined && observedAt !== undefined) {
    const ageDays = (asOf - observedAt) / 86_400;
    if (ageDays < 0 || ageDays > options.maxAgeDays) {
      findings.push({
        code: "sandbox.requirements.stale",
        message: "requirements are stale or future-dated",
      });
    }
  }
  return {
    source_ref: sourceRef,
    source_digest: sourceDigest,
    observed_at: observedText ?? "",
    provenance: "caller_supplied_source_digest",
  };
}

const UNSUPPORTED_FIELDS = ["allowed_syscalls", "allowed_egress_hosts", "required_capabilities"];

/** Non-empty as a control request: a non-blank string, a non-empty list or object, true, a number. */
function requested(value: Json | undefined): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (typeof value === "string") return value.trim() !== "";
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

function cwdPolicy(value: string | undefined, findings: PlanFinding[]): CwdPolicy | undefined {
  const policy = value ?? "skill-directory";
  if (policy === "skill-directory" || policy === "workspace" || policy === "custom") return policy;
  findings.push({
    code: "sandbox.cwd_policy.invalid",
    message: `unsupported cwd_policy ${policy}`,
  });
  return undefined;
}

function subset(
  values: readonly string[],
  allowed: readonly string[],
  code: string,
  findings: PlanFinding[],
): void {
  for (const value of values) {
    if (!allowed.includes(value))
      findings.push({ code, message: `baseline does not admit ${value}` });
  }
}

/** The narrowest declaration the requirements admit, with baseline and shape findings. */
export function buildDeclaration(
  requirements: JsonRecord,
  baseline: JsonRecord,
  findings: PlanFinding[],
): { declaration: SandboxDeclaration; unsupported: string[] } {
  const network = boolean(requirements, "network", false);
  const writablePaths = optionalStrings(requirements, "writable_paths") ?? [];
  if (writablePaths.some((path) => isAbsolute(path))) {
    findings.push({
      code: "sandbox.writable_path.absolute",
      message: "planned writable paths must be workspace-relative",
    });
  }
  const envAllowlist = optionalStrings(requirements, "env_allowlist");
  const requireEnforcement = boolean(requirements, "require_enforcement", true);
  const cwd = cwdPolicy(optionalText(requirements, "cwd_policy"), findings);
  const unsupported = UNSUPPORTED_FIELDS.filter((field) => requested(requirements[field]));
  if (unsupported.length > 0) {
    findings.push({
      code: "sandbox.control.unsupported",
      message: `Runx sandbox declarations do not express: ${unsupported.join(", ")}`,
    });
  }
  if (baseline.network_allowed === false && network) {
    findings.push({ code: "sandbox.baseline.network", message: "baseline forbids network access" });
  }
  if (baseline.require_enforcement === true && !requireEnforcement) {
    findings.push({
      code: "sandbox.baseline.enforcement",
      message: "baseline requires sandbox enforcement",
    });
  }
  const allowedPaths = optionalStrings(baseline, "allowed_writable_paths");
  if (allowedPaths !== undefined) {
    subset(writablePaths, allowedPaths, "sandbox.baseline.writable_path", findings);
  }
  const allowedEnv = optionalStrings(baseline, "allowed_env");
  if (allowedEnv !== undefined)
    subset(envAllowlist ?? [], allowedEnv, "sandbox.baseline.env", findings);
  const profile = network ? "network" : writablePaths.length === 0 ? "readonly" : "workspace-write";
  const declaration: SandboxDeclaration = {
    profile,
    network,
    writable_paths: writablePaths,
    require_enforcement: requireEnforcement,
  };
  if (cwd !== undefined) declaration.cwd_policy = cwd;
  if (envAllowlist !== undefined) declaration.env_allowlist = envAllowlist;
  return { declaration, unsupported };
}
