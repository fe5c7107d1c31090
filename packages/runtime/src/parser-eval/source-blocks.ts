/**
 * The declaration blocks an upstream skill source may carry beside its type, each checked
 * with upstream's sentences and answered in its normal form: `environment` (portable variable
 * names), `pages` (runtime-owned paging of a contained file), `external_adapter`,
 * `thread_outbox_provider`, the strictly deserialised `act:` block and an `mcp` source's
 * server. The source itself (type, command, javascript module, agent task) is
 * parser-eval/source.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalCount,
  optionalString,
  optionalStringArray,
  put,
  rejectUnknownFields,
  requiredObject,
  requiredString,
  serdeKind,
} from "./fields.js";

/** The javascript worker's input cap (upstream's contract constant), which bounds `pages`. */
const JAVASCRIPT_MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** The keys of an `act:` block, in upstream's declaration order (its serde field list). */
const ACT_FIELDS = [
  "form",
  "form_from",
  "purpose",
  "purpose_from",
  "legitimacy",
  "legitimacy_from",
  "reason_from",
  "reason_from_input",
  "target_from",
  "decision_from",
  "effect_from",
  "effect_field_from",
  "effect_from_input",
  "effect_type",
  "effect_prefix",
  "effect_prefix_from",
  "actor_from",
  "authority_from",
  "authority_term_from",
  "authority_parent_from",
  "authority_subset_proof_from",
  "mint_authority",
  "requested_scope_from",
  "previous_from",
  "reason_step",
  "effect_step",
] as const;

/** A relative path whose every component is a plain name (no `.`, `..`, root or empty). */
function safeRelativePath(value: string): boolean {
  if (value.trim() === "" || value.startsWith("/")) return false;
  // `a//b` and a trailing `/` are fine for a path's components; `.` components are dropped
  // by the component walk only when they are not leading, and a leading `./` is CurDir.
  const parts = value.split("/");
  return parts.every((part, index) => {
    if (part === "") return index > 0;
    if (part === "..") return false;
    if (part === ".") return index > 0;
    return true;
  });
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `source.environment`: required/optional variable names, portable, unique, not RUNX_*. */
export function environmentRequirements(value: JsonValue | undefined): {
  required: string[];
  optional: string[];
} {
  if (value === undefined) return { required: [], optional: [] };
  const environment = requiredObject(value, "source.environment");
  rejectUnknownFields(environment, "source.environment", ["required", "optional"]);
  const required = optionalStringArray(environment.required, "source.environment.required") ?? [];
  const optional = optionalStringArray(environment.optional, "source.environment.optional") ?? [];
  const seen = new Set<string>();
  for (const [field, names] of [
    ["source.environment.required", required],
    ["source.environment.optional", optional],
  ] as const) {
    for (const name of names) {
      if (!ENV_NAME.test(name))
        invalid(
          `${field} entry ${JSON.stringify(name)} must be a portable environment variable name`,
        );
      if (name.startsWith("RUNX_"))
        invalid(`${field} cannot request runtime-reserved environment variable ${name}`);
      if (seen.has(name)) invalid(`${field} repeats environment variable ${JSON.stringify(name)}`);
      seen.add(name);
    }
  }
  return { required, optional };
}

/** The environment requirements in upstream's IR form (absent when nothing is declared). */
export function environmentIr(env: {
  required: string[];
  optional: string[];
}): JsonObject | undefined {
  if (env.required.length === 0 && env.optional.length === 0) return undefined;
  return put(
    {},
    {
      required: env.required.length > 0 ? env.required : undefined,
      optional: env.optional.length > 0 ? env.optional : undefined,
    },
  );
}

function pageInputName(name: string, field: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(name))
    invalid(`${field} must name one declared input using letters, digits, '_' or '-'.`);
  return name;
}

/** `source.pages`: runtime-owned paging of a contained file, javascript sources only. */
export function artifactPages(value: JsonValue | undefined, type: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  if (type !== "javascript")
    invalid("source.pages is only valid for deterministic javascript sources.");
  const pages = requiredObject(value, "source.pages");
  rejectUnknownFields(pages, "source.pages", [
    "framing",
    "media_type",
    "page_bytes",
    "path_from",
    "path_scope_from",
  ]);
  const pathFrom = pageInputName(
    requiredString(pages.path_from, "source.pages.path_from"),
    "source.pages.path_from",
  );
  const scope = optionalString(pages.path_scope_from, "source.pages.path_scope_from");
  const pathScopeFrom =
    scope === undefined ? undefined : pageInputName(scope, "source.pages.path_scope_from");
  if (pathFrom === "runx_page" || pathScopeFrom === "runx_page")
    invalid("source.pages input names cannot use the runtime-reserved runx_page field.");
  if (pathScopeFrom === pathFrom)
    invalid("source.pages.path_from and path_scope_from must name different inputs.");
  const mediaType = requiredString(pages.media_type, "source.pages.media_type");
  const framing = requiredString(pages.framing, "source.pages.framing");
  if (framing !== "json_array")
    invalid(`source.pages.framing ${JSON.stringify(framing)} is unsupported; expected json_array.`);
  const pageBytes = optionalCount(pages.page_bytes, "source.pages.page_bytes") ?? 1024 * 1024;
  if (pageBytes === 0 || pageBytes > JAVASCRIPT_MAX_INPUT_BYTES)
    invalid(`source.pages.page_bytes must be between 1 and ${JAVASCRIPT_MAX_INPUT_BYTES}.`);
  return put(
    { path_from: pathFrom },
    {
      path_scope_from: pathScopeFrom,
      media_type: mediaType,
      framing,
      page_bytes: pageBytes,
    },
  );
}

/** `source.external_adapter`: exactly one of an inline manifest or a relative manifest path. */
export function externalAdapter(source: JsonObject, type: string): JsonObject | undefined {
  const declaration = source.external_adapter;
  if (type !== "external-adapter") {
    if (declaration !== undefined)
      invalid("source.external_adapter is only valid for external-adapter sources.");
    return undefined;
  }
  const record = requiredObject(declaration, "source.external_adapter");
  rejectUnknownFields(record, "source.external_adapter", ["manifest", "manifest_path"]);
  const hasManifest = record.manifest !== undefined;
  const hasPath = record.manifest_path !== undefined;
  if (hasManifest === hasPath)
    invalid("source.external_adapter must declare exactly one of manifest or manifest_path.");
  if (hasManifest) {
    const manifest = record.manifest;
    if (!isJsonObject(manifest))
      invalid(
        `source.external_adapter.manifest is invalid: invalid type: ${serdeKind(manifest ?? null)}, expected struct ExternalAdapterManifest`,
      );
    return { inline: manifest };
  }
  const path = requiredString(record.manifest_path, "source.external_adapter.manifest_path");
  if (!safeRelativePath(path))
    invalid(
      `source.external_adapter.manifest_path must be a relative path below the skill directory: '${path}'`,
    );
  return { path };
}

function outboxPath(record: JsonObject, key: string, required: boolean): string | undefined {
  const field = `source.thread_outbox_provider.${key}`;
  const path = required ? requiredString(record[key], field) : optionalString(record[key], field);
  if (path !== undefined && !safeRelativePath(path))
    invalid(`${field} must be a relative path below the skill directory: '${path}'`);
  return path;
}

/** `source.thread_outbox_provider`: a push or fetch operation over relative paths. */
export function threadOutboxProvider(source: JsonObject, type: string): JsonObject | undefined {
  const declaration = source.thread_outbox_provider;
  if (type !== "thread-outbox-provider") {
    if (declaration !== undefined)
      invalid("source.thread_outbox_provider is only valid for thread-outbox-provider sources.");
    return undefined;
  }
  const record = requiredObject(declaration, "source.thread_outbox_provider");
  rejectUnknownFields(record, "source.thread_outbox_provider", [
    "operation",
    "manifest_path",
    "push_path",
    "fetch_path",
  ]);
  const operation = requiredString(record.operation, "source.thread_outbox_provider.operation");
  if (operation !== "push" && operation !== "fetch")
    invalid(`source.thread_outbox_provider.operation must be push or fetch, got '${operation}'.`);
  const manifestPath = outboxPath(record, "manifest_path", true);
  const pushPath = outboxPath(record, "push_path", false);
  const fetchPath = outboxPath(record, "fetch_path", false);
  if (operation === "push" && fetchPath !== undefined)
    invalid("source.thread_outbox_provider.fetch_path is only valid for fetch operations.");
  if (operation === "fetch" && pushPath !== undefined)
    invalid("source.thread_outbox_provider.push_path is only valid for push operations.");
  if (operation === "fetch" && fetchPath === undefined)
    invalid("source.thread_outbox_provider.fetch_path is required for fetch operations.");
  return put({ operation }, { manifestPath, pushPath, fetchPath });
}

/** Upstream deserializes `act:` strictly; a shape problem reads as its deserializer words it. */
export function actDeclaration(value: JsonValue | undefined): JsonObject | undefined {
  if (value === undefined) return undefined;
  const malformed = (reason: string): never => invalid(`source.act is malformed: ${reason}`);
  if (!isJsonObject(value))
    return malformed(`invalid type: ${serdeKind(value)}, expected struct ActDeclaration`);
  const act: JsonObject = {};
  for (const key of Object.keys(value).sort()) {
    const entry = value[key];
    if (!(ACT_FIELDS as readonly string[]).includes(key))
      malformed(
        `unknown field \`${key}\`, expected one of ${ACT_FIELDS.map((f) => `\`${f}\``).join(", ")}`,
      );
    if (entry === null || entry === undefined) continue;
    if (key === "mint_authority") {
      if (!isJsonObject(entry))
        malformed(`invalid type: ${serdeKind(entry)}, expected struct MintAuthorityDirective`);
      const directive = entry as JsonObject;
      for (const inner of Object.keys(directive).sort())
        if (inner !== "source") malformed(`unknown field \`${inner}\`, expected \`source\``);
      const source = directive.source;
      if (source === undefined) malformed("missing field `source`");
      if (typeof source !== "string")
        return malformed(
          `invalid type: ${serdeKind(source ?? null)}, expected enum MintScopeSource`,
        );
      if (source !== "static_scopes" && source !== "requested_scope")
        malformed(
          `unknown variant \`${source}\`, expected \`static_scopes\` or \`requested_scope\``,
        );
      act[key] = { source };
      continue;
    }
    if (typeof entry !== "string")
      malformed(`invalid type: ${serdeKind(entry)}, expected a string`);
    act[key] = entry;
  }
  const mint = act.mint_authority;
  if (mint === undefined) {
    if (act.requested_scope_from !== undefined)
      invalid("source.act.requested_scope_from is only valid with a mint_authority directive.");
  } else {
    if (
      act.authority_term_from !== undefined ||
      act.authority_parent_from !== undefined ||
      act.authority_subset_proof_from !== undefined
    )
      invalid(
        "source.act.mint_authority (compute path) is mutually exclusive with the pre-built authority_term_from / authority_parent_from / authority_subset_proof_from keys.",
      );
    const from = isJsonObject(mint) ? mint.source : undefined;
    if (from === "static_scopes" && act.requested_scope_from !== undefined)
      invalid(
        "source.act.mint_authority source static_scopes must not declare requested_scope_from.",
      );
    if (from === "requested_scope" && act.requested_scope_from === undefined)
      invalid("source.act.mint_authority source requested_scope requires requested_scope_from.");
  }
  if (
    act.reason_from_input !== undefined &&
    (act.reason_step !== undefined || act.reason_from !== undefined)
  )
    invalid(
      "source.act.reason_from_input (operator-authored) is mutually exclusive with the step-authored reason_step / reason_from keys.",
    );
  return act;
}

/** `source.server` of an `mcp` source. */
export function mcpServer(source: JsonObject, type: string): JsonObject | undefined {
  if (type !== "mcp") return undefined;
  const server = requiredObject(source.server, "source.server");
  return put(
    {
      command: requiredString(server.command, "source.server.command"),
      args: optionalStringArray(server.args, "source.server.args") ?? [],
    },
    { cwd: optionalString(server.cwd, "source.server.cwd") },
  );
}
