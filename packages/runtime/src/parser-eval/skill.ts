/**
 * Upstream's SKILL.md validation (`ValidatedSkill`): the frontmatter checked in upstream's
 * order (the `runx` block, `source`, governance, categories, registry owner, `name`,
 * `description`, the source, inputs) with its sentences, answered in its normal form beside
 * the raw parts. Lenient mode only tolerates a `runx` block that is not a mapping. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import { isJsonObject } from "../parser/json.js";
import { artifactContract } from "./artifact-contract.js";
import { invalid, optionalBool, optionalObject, optionalString, requiredString } from "./fields.js";
import {
  first,
  validateAllowedTools,
  validateExecution,
  validateIdempotency,
  validateInputs,
  validateRetry,
} from "./governance.js";
import { validateSource } from "./source.js";

/** The raw parts of a SKILL.md as upstream keeps them. */
export interface RawSkill {
  frontmatter: JsonObject;
  rawFrontmatter: string;
  body: string;
}

export type SkillMode = "strict" | "lenient";

function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

/** A category trimmed, and dropped when blank. */
function category(value: JsonValue | undefined, field: string): string | undefined {
  const text = optionalString(value, field)?.trim();
  return text === undefined || text === "" ? undefined : text;
}

function registryOwner(value: JsonValue | undefined): string | undefined {
  const owner = optionalString(value, "registry_owner");
  if (owner === undefined) return undefined;
  if (
    owner !== owner.toLowerCase() ||
    owner.startsWith("-") ||
    owner.endsWith("-") ||
    !/^[a-z0-9._-]*$/.test(owner)
  )
    invalid("registry_owner must be a canonical lowercase registry namespace.");
  return owner;
}

/** A key as written, `null` included (upstream keeps a present value verbatim). */
const present = (record: JsonObject, key: string): JsonValue | undefined =>
  key in record ? (record[key] ?? null) : undefined;

/** Validates a parsed SKILL.md; throws UpstreamValidationError with upstream's sentence. */
export function validateSkill(raw: RawSkill, mode: SkillMode = "strict"): JsonObject {
  const fm = raw.frontmatter;
  let runx: JsonObject | undefined;
  const runxValue = fm.runx;
  if (isJsonObject(runxValue)) runx = runxValue;
  else if (runxValue !== undefined && runxValue !== null && mode === "strict")
    invalid("runx must be an object when present.");
  const source = ("source" in fm ? optionalObject(fm.source, "source") : undefined) ?? {
    type: "agent",
  };
  const risk = present(fm, "risk");
  const riskRecord = isJsonObject(risk) ? risk : undefined;
  const retry = validateRetry(first(fm.retry, runx?.retry), "retry");
  const idempotency = validateIdempotency(first(fm.idempotency, runx?.idempotency), "idempotency");
  const mutating = optionalBool(
    first(first(fm.mutating, riskRecord?.mutating), runx?.mutating),
    "mutating",
  );
  const artifacts = artifactContract(runx?.artifacts, "runx.artifacts");
  const allowedTools = validateAllowedTools(runx?.allowed_tools, "runx.allowed_tools");
  const execution = validateExecution(first(fm.execution, runx?.execution), "execution");
  const portableCategory = category(fm.category, "category");
  const runxCategory = category(runx?.category, "runx.category");
  const owner = registryOwner(fm.registry_owner);
  const name = requiredString(fm.name, "name");
  const description = optionalString(fm.description, "description");
  const validatedSource = validateSource(source);
  const inputs = validateInputs(optionalObject(fm.inputs, "inputs") ?? {}, "inputs");
  return put(
    {
      name,
      body: raw.body,
      source: validatedSource,
      inputs,
      allowedTools: allowedTools ?? null,
      raw: { frontmatter: fm, rawFrontmatter: raw.rawFrontmatter, body: raw.body },
    },
    {
      description,
      category: portableCategory,
      runxCategory,
      registryOwner: owner,
      auth: present(fm, "auth"),
      risk,
      runtime: present(fm, "runtime"),
      retry,
      idempotency,
      mutating,
      artifacts,
      execution,
      runx,
    },
  );
}
