/**
 * Upstream's catalog metadata of a runner manifest (`CatalogMetadata`): kind, audience,
 * visibility (public by default), role, bindings and the all-or-nothing capability fields,
 * checked in upstream's order with its sentences and answered in camelCase. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalBool,
  optionalString,
  optionalStringArray,
  rejectUnknownFields,
  requiredString,
} from "./fields.js";

const CATALOG_FIELDS = [
  "approval",
  "audience",
  "canonical_skill",
  "completion",
  "execution",
  "kind",
  "part_of",
  "provider",
  "requires_adapter",
  "role",
  "runtime_path",
  "visibility",
];

/** Roles that only make sense inside a larger package, never as a public catalog entry. */
const INNER_ROLES = ["graph-stage", "runtime-path", "harness-fixture"];

function choice(
  text: string | undefined,
  allowed: readonly string[],
  sentence: string,
): string | undefined {
  if (text !== undefined && !allowed.includes(text)) invalid(sentence);
  return text;
}

function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

/** Validates `catalog` (absent → undefined); `label` names it in sentences. */
export function catalogMetadata(
  value: JsonObject | undefined,
  label: string,
): JsonObject | undefined {
  if (value === undefined) return undefined;
  rejectUnknownFields(value, label, CATALOG_FIELDS);
  const kind = choice(
    requiredString(value.kind, `${label}.kind`),
    ["skill", "graph"],
    `${label}.kind must be skill or graph.`,
  );
  const audience = choice(
    requiredString(value.audience, `${label}.audience`),
    ["public", "builder", "operator", "system"],
    `${label}.audience must be public, builder, operator, or system.`,
  );
  const visibility =
    choice(
      optionalString(value.visibility, `${label}.visibility`),
      ["public", "internal"],
      `${label}.visibility must be public or internal.`,
    ) ?? "public";
  const role =
    choice(
      requiredString(value.role, `${label}.role`),
      ["canonical", "branded", "context", ...INNER_ROLES],
      `${label}.role must be canonical, branded, context, graph-stage, runtime-path, or harness-fixture.`,
    ) ?? "";
  if (visibility === "public" && INNER_ROLES.includes(role))
    invalid(`${label}.role cannot be ${role} when visibility is public.`);
  const canonicalSkill = optionalString(value.canonical_skill, `${label}.canonical_skill`);
  const provider = optionalString(value.provider, `${label}.provider`);
  const runtimePath = optionalString(value.runtime_path, `${label}.runtime_path`);
  const partOf = optionalStringArray(value.part_of, `${label}.part_of`) ?? [];
  const execution = choice(
    optionalString(value.execution, `${label}.execution`),
    ["plan", "read", "execute"],
    `${label}.execution must be plan, read, or execute.`,
  );
  const completion = choice(
    optionalString(value.completion, `${label}.completion`),
    ["plan", "runtime_receipt", "provider_readback"],
    `${label}.completion must be plan, runtime_receipt, or provider_readback.`,
  );
  const requiresAdapter = optionalBool(value.requires_adapter, `${label}.requires_adapter`);
  const approval = choice(
    optionalString(value.approval, `${label}.approval`),
    ["none", "conditional", "required"],
    `${label}.approval must be none, conditional, or required.`,
  );
  const capability = [execution, completion, requiresAdapter, approval].map((v) => v !== undefined);
  if (capability.some(Boolean) && !capability.every(Boolean))
    invalid(
      `${label} capability metadata must declare execution, completion, requires_adapter, and approval together.`,
    );
  if (role === "branded") {
    if (canonicalSkill === undefined)
      invalid(`${label}.canonical_skill is required when catalog.role is branded.`);
    if (provider === undefined)
      invalid(`${label}.provider is required when catalog.role is branded.`);
  }
  if (INNER_ROLES.includes(role) && partOf.length === 0)
    invalid(`${label}.part_of is required when catalog.role is ${role}.`);
  return put(
    { kind: kind ?? "", audience: audience ?? "", visibility, role },
    {
      canonicalSkill,
      provider,
      runtimePath,
      partOf: partOf.length > 0 ? partOf : undefined,
      execution,
      completion,
      requiresAdapter,
      approval,
    },
  );
}
