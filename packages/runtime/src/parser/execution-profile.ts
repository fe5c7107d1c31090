/**
 * X.yaml execution profiles: strict YAML, the execution-profile JSON Schema
 * (unknown fields are errors), then the cross-field rules and runner normalization.
 * Every failure is PROFILE_INVALID located at the offending key. Pure.
 */
import { RuntimeError } from "../errors.js";
import { validateExecutionProfile } from "../generated/validate-execution-profile.js";
import { isJsonObject } from "./json.js";
import type { JsonObject, JsonValue } from "./json.js";
import { normalizeInputDeclarations } from "./input-declarations.js";
import type { FailAt, InputDeclaration } from "./input-declarations.js";
import { normalizeRunner } from "./runners.js";
import type { RunnerDefinition } from "./runners.js";
import { schemaError } from "./schema-errors.js";
import { isRunxSecretName } from "./secret-names.js";
import { formatKeyPath, parseStrictYaml } from "./strict-yaml.js";
import type { StrictYamlDocument } from "./strict-yaml.js";

/** One inline harness case; the body is interpreted by the harness. */
export interface HarnessCase extends JsonObject {
  name: string;
}

/** A validated, normalized X.yaml. */
export interface ExecutionProfile {
  skill?: string;
  version?: string;
  catalog?: JsonObject;
  runx?: JsonObject;
  policy?: JsonObject;
  emits?: JsonValue;
  marketplace?: JsonObject;
  credentials: Record<string, JsonObject>;
  inputDefinitions: Record<string, InputDeclaration>;
  /** Runners in declaration order. */
  runners: Record<string, RunnerDefinition>;
  harness?: { files: string[]; cases: HarnessCase[] };
  /** The document exactly as parsed. */
  raw: JsonObject;
}

/** Where the profile text came from (used in error details). */
export interface ParseProfileOptions {
  file?: string;
}

/** A profile together with its parsed document, for callers that need key positions later. */
export interface ParsedProfileDocument {
  profile: ExecutionProfile;
  document: StrictYamlDocument;
}

/** A FailAt that throws `code` located in `doc`. */
export function failIn(
  doc: StrictYamlDocument,
  code: "PROFILE_INVALID" | "FRONTMATTER_INVALID",
  file?: string,
): FailAt {
  return (path, message) => {
    const position = doc.locate(path);
    throw new RuntimeError(code, message, {
      file,
      line: position.line,
      column: position.column,
      path: formatKeyPath(path),
    });
  };
}

/**
 * Credential declarations beyond their schema: an HTTPS audience with a host and nothing
 * else, delivery names that are not runx's own secrets and not shared between auth modes,
 * and every runner `credential:` naming a declared requirement.
 */
function checkCredentials(
  raw: JsonObject,
  runners: Record<string, RunnerDefinition>,
  fail: FailAt,
): void {
  const declared = isJsonObject(raw.credentials) ? raw.credentials : {};
  for (const [name, requirement] of Object.entries(declared)) {
    if (!isJsonObject(requirement)) continue;
    if (typeof requirement.audience === "string") {
      let url: URL | undefined;
      try {
        url = new URL(requirement.audience);
      } catch {
        url = undefined;
      }
      if (
        url?.protocol !== "https:" ||
        url.hostname === "" ||
        url.username !== "" ||
        url.password !== "" ||
        url.search !== "" ||
        url.hash !== ""
      ) {
        fail(
          ["credentials", name, "audience"],
          "audience must be an https URL with a host and no credentials, query or fragment",
        );
      }
    }
    const seen = new Map<string, string>();
    for (const [mode, auth] of Object.entries(
      isJsonObject(requirement.auth) ? requirement.auth : {},
    )) {
      const delivery = isJsonObject(auth) && isJsonObject(auth.delivery) ? auth.delivery : {};
      if (typeof delivery.env !== "string") continue;
      const at = ["credentials", name, "auth", mode, "delivery", "env"];
      if (isRunxSecretName(delivery.env)) {
        fail(at, `${delivery.env} is a runx secret and can never be a credential delivery`);
      }
      const other = seen.get(delivery.env);
      if (other !== undefined) {
        fail(at, `auth modes ${other} and ${mode} both deliver ${delivery.env}`);
      }
      seen.set(delivery.env, mode);
    }
  }
  for (const runner of Object.values(runners)) {
    if (runner.credential !== undefined && !isJsonObject(declared[runner.credential])) {
      fail(
        ["runners", runner.name, "credential"],
        `credential "${runner.credential}" is not declared under credentials`,
      );
    }
  }
}

function checkCrossFieldRules(
  raw: JsonObject,
  runners: Record<string, RunnerDefinition>,
  fail: FailAt,
): void {
  const defaults = Object.values(runners).filter((runner) => runner.default);
  const second = defaults[1];
  if (second !== undefined)
    fail(["runners", second.name, "default"], "declares multiple default runners");

  for (const runner of Object.values(runners)) {
    const packets = isJsonObject(runner.artifacts?.packets) ? runner.artifacts.packets : {};
    const named = isJsonObject(runner.artifacts?.named_emits) ? runner.artifacts.named_emits : {};
    for (const key of Object.keys(packets)) {
      if (named[key] === undefined) {
        fail(
          ["runners", runner.name, "artifacts", "packets", key],
          `packets.${key} must also be listed in named_emits`,
        );
      }
    }
  }

  checkCredentials(raw, runners, fail);

  const offers =
    isJsonObject(raw.marketplace) && isJsonObject(raw.marketplace.offers)
      ? raw.marketplace.offers
      : {};
  for (const name of Object.keys(offers)) {
    if (runners[name] === undefined)
      fail(["marketplace", "offers", name], `runner "${name}" is not declared`);
  }

  const cases =
    isJsonObject(raw.harness) && Array.isArray(raw.harness.cases) ? raw.harness.cases : [];
  const names = new Set<string>();
  cases.forEach((item, index) => {
    if (!isJsonObject(item)) return;
    if (typeof item.runner === "string" && runners[item.runner] === undefined) {
      fail(["harness", "cases", index, "runner"], `runner "${item.runner}" is not declared`);
    }
    if (typeof item.name === "string") {
      if (names.has(item.name))
        fail(["harness", "cases", index, "name"], "harness case names must be unique");
      names.add(item.name);
    }
  });
}

/** Validates and normalizes an already-parsed X.yaml document. */
export function buildExecutionProfile(
  document: StrictYamlDocument,
  options: ParseProfileOptions = {},
): ExecutionProfile {
  const fail: FailAt = failIn(document, "PROFILE_INVALID", options.file);
  const raw = document.value;
  if (!isJsonObject(raw)) fail([], "the execution profile must be a mapping");
  // A separate binding, so the validator's type guard does not re-narrow `raw` to unknown.
  const candidate: unknown = raw;
  if (!validateExecutionProfile(candidate)) {
    throw schemaError(validateExecutionProfile.errors ?? [], raw, document, {
      code: "PROFILE_INVALID",
      file: options.file,
      subject: "execution profile",
    });
  }

  const definitionsRaw = isJsonObject(raw.input_definitions) ? raw.input_definitions : {};
  for (const [name, def] of Object.entries(definitionsRaw)) {
    if (isJsonObject(def) && def.definition !== undefined) {
      fail(
        ["input_definitions", name, "definition"],
        "input definitions cannot refer to other definitions",
      );
    }
  }
  const inputDefinitions = normalizeInputDeclarations(definitionsRaw, ["input_definitions"], fail);

  const runners: Record<string, RunnerDefinition> = {};
  for (const [name, runner] of Object.entries(isJsonObject(raw.runners) ? raw.runners : {})) {
    if (!isJsonObject(runner)) fail(["runners", name], "a runner must be a mapping");
    runners[name] = normalizeRunner(name, runner, {
      path: ["runners", name],
      fail,
      definitions: definitionsRaw,
    });
  }
  checkCrossFieldRules(raw, runners, fail);

  const profile: ExecutionProfile = { credentials: {}, inputDefinitions, runners, raw };
  if (typeof raw.skill === "string") profile.skill = raw.skill;
  if (typeof raw.version === "string") profile.version = raw.version;
  for (const key of ["catalog", "runx", "policy", "marketplace"] as const) {
    const value = raw[key];
    if (isJsonObject(value)) profile[key] = value;
  }
  if (raw.emits !== undefined) profile.emits = raw.emits;
  if (isJsonObject(raw.credentials)) {
    for (const [name, value] of Object.entries(raw.credentials))
      if (isJsonObject(value)) profile.credentials[name] = value;
  }
  if (isJsonObject(raw.harness)) {
    const files = Array.isArray(raw.harness.files)
      ? raw.harness.files.filter((f): f is string => typeof f === "string")
      : [];
    const cases = Array.isArray(raw.harness.cases) ? raw.harness.cases.filter(isJsonObject) : [];
    profile.harness = { files, cases: cases as HarnessCase[] };
  }
  return profile;
}

/** Parses X.yaml text and keeps the document for position lookups. */
export function parseExecutionProfileDocument(
  text: string,
  options: ParseProfileOptions = {},
): ParsedProfileDocument {
  const document = parseStrictYaml(text, { file: options.file });
  return { profile: buildExecutionProfile(document, options), document };
}

/** Parses and validates X.yaml text. Throws YAML_SYNTAX, YAML_FORBIDDEN or PROFILE_INVALID. */
export function parseExecutionProfile(
  text: string,
  options: ParseProfileOptions = {},
): ExecutionProfile {
  return parseExecutionProfileDocument(text, options).profile;
}
