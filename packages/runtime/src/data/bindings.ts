/**
 * Data-source bindings: which backend a logical `data_source_ref` lives in. Resolution order:
 * `RUNX_DATA_SOURCES` (inline JSON when it starts with `{`, else a file path relative to the
 * workspace; a missing file is an error), then `.runx/data-sources.json` (optional), then the
 * implicit SQLite file for unbound `local://…` refs, else `needs_source`. Bindings hold only
 * non-secret fields: secret-like field names anywhere, credentials inside an endpoint, unknown
 * adapters and unknown fields are refused with the file and field named.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync } from "node:fs";
import { isAbsolute, join, posix, sep } from "node:path";
import { RuntimeError } from "../errors.js";
import { readFileCappedSync } from "../packages/read-capped.js";
import type { Json } from "../contracts/json.js";
import type { DataAdapter } from "./adapter.js";
import { DataStop, isResource, isSecretLikeName } from "./model.js";

export const ADAPTERS = ["data.sqlite", "data.postgres", "data.redis"] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface SqliteBinding {
  adapter: "data.sqlite";
  database_path: string;
  profile?: string;
}
export interface PostgresBinding {
  adapter: "data.postgres";
  endpoint: string;
  user?: string;
  profile?: string;
}
export interface RedisBinding {
  adapter: "data.redis";
  endpoint: string;
  key_prefix: string;
  profile?: string;
}
export type DataBinding = (SqliteBinding | PostgresBinding | RedisBinding) & {
  /** Where the binding came from (for messages and `runx data sources`). */
  origin: string;
  /**
   * The resources the binding declares, when it declares any: an operation on any other
   * resource stops with `needs_source`. Absent (or `{}`, as the implicit local binding has)
   * leaves the source's resources open.
   */
  resources?: readonly string[];
};

/** The one resource kind and partition key the event store serves. */
const RESOURCE_FIELDS: Record<string, string> = {
  kind: "event_stream",
  partition_key: "aggregate_id",
};

/** Re-exported: bindings and event content share one secret-like name rule. */
export { isSecretLikeName };

const FIELDS: Record<AdapterName, readonly string[]> = {
  "data.sqlite": [
    "adapter",
    "database_path",
    "profile",
    "resources",
    "storage_class",
    "data_source_ref",
  ],
  "data.postgres": [
    "adapter",
    "endpoint",
    "user",
    "profile",
    "resources",
    "storage_class",
    "data_source_ref",
  ],
  "data.redis": [
    "adapter",
    "endpoint",
    "key_prefix",
    "profile",
    "resources",
    "storage_class",
    "data_source_ref",
  ],
};

export const DEFAULT_REDIS_ENDPOINT = "redis://127.0.0.1:6379/0";
export const DEFAULT_REDIS_PREFIX = "runx:{runx-data-store}";

function bad(origin: string, path: string, message: string): never {
  throw new DataStop("needs_source", `${origin}: ${path}: ${message}`);
}

function scanSecrets(value: Json, origin: string, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => scanSecrets(item, origin, `${path}[${i}]`));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (isSecretLikeName(key)) {
        bad(
          origin,
          `${path}.${key}`,
          "secret-like field names are not allowed in a binding; name a credential profile instead",
        );
      }
      scanSecrets(item, origin, `${path}.${key}`);
    }
  }
}

function checkEndpoint(endpoint: string, schemes: string[], origin: string, path: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return bad(origin, path, "endpoint is not a URL");
  }
  if (!schemes.includes(url.protocol)) {
    bad(
      origin,
      path,
      `endpoint scheme must be ${schemes.map((s) => s.replace(":", "")).join(" or ")}`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    bad(
      origin,
      path,
      "endpoint must not embed credentials; use a credential profile or PGUSER/PGPASSWORD-style environment",
    );
  }
  if (url.search !== "" || url.hash !== "")
    bad(origin, path, "endpoint must not carry a query string or fragment");
}

const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._:{}/-]{0,191}$/;
const TAG = /\{([^{}]*)\}/g;

/** Checks a Redis key prefix: exactly one `{hash tag}` so a stream's keys share one cluster slot. */
export function checkKeyPrefix(prefix: string, origin: string, path: string): void {
  if (!PREFIX.test(prefix))
    bad(
      origin,
      path,
      "key_prefix must start with a letter or digit and hold only [A-Za-z0-9._:{}/-] (at most 192 characters)",
    );
  const tags = [...prefix.matchAll(TAG)];
  const braces = (prefix.match(/[{}]/g) ?? []).length;
  if (tags.length !== 1 || braces !== 2) {
    bad(
      origin,
      path,
      "key_prefix must contain exactly one {hash tag}, e.g. runx:{acme-board}, so a stream's keys share one cluster slot",
    );
  }
  const tag = tags[0]?.[1] ?? "";
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(tag)) {
    bad(
      origin,
      path,
      "the {hash tag} must be 1-64 characters from [A-Za-z0-9._:-], starting with a letter or digit",
    );
  }
}

function checkDatabasePath(value: string, origin: string, path: string): void {
  if (
    value === "" ||
    value.trim() !== value ||
    value.includes("\\") ||
    value.startsWith("/") ||
    /^[A-Za-z]:/.test(value) ||
    value.split("/").some((part) => part === ".." || part === ".") ||
    posix.normalize(value) !== value
  ) {
    bad(
      origin,
      path,
      "database_path must be a relative POSIX path inside the workspace (no '.', '..', backslashes or absolute paths)",
    );
  }
  // runx's own databases (state.sqlite and the rest of .runx/) are never a data source; the
  // implicit local:// sources live under .runx/data/.
  if (value.split("/")[0] === ".runx" && !value.startsWith(".runx/data/")) {
    bad(
      origin,
      path,
      "database_path may not point into runx's own state (.runx/ outside .runx/data/)",
    );
  }
}

/** Validates one binding document entry. */
export function validateBinding(ref: string, raw: Json, origin: string): DataBinding {
  const path = `data_sources.${ref}`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    bad(origin, path, "binding must be an object");
  scanSecrets(raw, origin, path);
  const adapter = raw.adapter;
  if (typeof adapter !== "string" || adapter === "")
    bad(origin, `${path}.adapter`, "adapter is required");
  if (!(ADAPTERS as readonly string[]).includes(adapter)) {
    bad(
      origin,
      `${path}.adapter`,
      `unknown adapter "${adapter}" (supported: ${ADAPTERS.join(", ")})`,
    );
  }
  const name = adapter as AdapterName;
  for (const key of Object.keys(raw)) {
    if (!FIELDS[name].includes(key))
      bad(
        origin,
        `${path}.${key}`,
        `unknown field for ${name} (allowed: ${FIELDS[name].join(", ")})`,
      );
  }
  const text = (key: string): string | undefined => {
    const value = raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string") return bad(origin, `${path}.${key}`, "must be a string");
    return value;
  };
  if (raw.resources !== undefined) {
    if (
      raw.resources === null ||
      typeof raw.resources !== "object" ||
      Array.isArray(raw.resources)
    ) {
      bad(origin, `${path}.resources`, "must be an object of resource names");
    }
    for (const [resource, spec] of Object.entries(raw.resources)) {
      const at = `${path}.resources.${resource}`;
      if (!isResource(resource)) bad(origin, at, "is not a valid resource name");
      if (spec === null || typeof spec !== "object" || Array.isArray(spec))
        bad(origin, at, 'must be an object such as {"kind": "event_stream"}');
      for (const [key, value] of Object.entries(spec)) {
        const expected = RESOURCE_FIELDS[key];
        if (expected === undefined)
          bad(origin, `${at}.${key}`, "unknown field (allowed: kind, partition_key)");
        if (value !== expected) bad(origin, `${at}.${key}`, `must be "${expected}"`);
      }
    }
  }
  const declared =
    raw.resources !== undefined && Object.keys(raw.resources).length > 0
      ? Object.keys(raw.resources)
      : undefined;
  const profile = text("profile");
  const extra = {
    ...(profile !== undefined ? { profile } : {}),
    ...(declared !== undefined ? { resources: declared } : {}),
  };
  switch (name) {
    case "data.sqlite": {
      const database = text("database_path");
      if (database === undefined)
        return bad(origin, `${path}.database_path`, "database_path is required for data.sqlite");
      checkDatabasePath(database, origin, `${path}.database_path`);
      return { adapter: name, database_path: database, ...extra, origin };
    }
    case "data.postgres": {
      const endpoint = text("endpoint");
      if (endpoint === undefined)
        return bad(origin, `${path}.endpoint`, "endpoint is required for data.postgres");
      checkEndpoint(endpoint, ["postgres:", "postgresql:"], origin, `${path}.endpoint`);
      const user = text("user");
      return { adapter: name, endpoint, ...(user !== undefined ? { user } : {}), ...extra, origin };
    }
    case "data.redis": {
      const endpoint = text("endpoint") ?? DEFAULT_REDIS_ENDPOINT;
      checkEndpoint(endpoint, ["redis:", "rediss:"], origin, `${path}.endpoint`);
      const prefix = text("key_prefix") ?? DEFAULT_REDIS_PREFIX;
      checkKeyPrefix(prefix, origin, `${path}.key_prefix`);
      return { adapter: name, endpoint, key_prefix: prefix, ...extra, origin };
    }
  }
}

/** Parses a binding document; the whole document is validated, not just the ref asked for. */
export function parseBindingDocument(text: string, origin: string): Map<string, DataBinding> {
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch (error) {
    return bad(origin, "$", `invalid JSON (${(error as Error).message})`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    bad(origin, "$", "must be an object with data_sources");
  for (const key of Object.keys(doc))
    if (key !== "data_sources") bad(origin, key, "unknown top-level field (expected data_sources)");
  const sources = doc.data_sources;
  if (sources === null || typeof sources !== "object" || Array.isArray(sources))
    bad(origin, "data_sources", "must be an object keyed by data_source_ref");
  const out = new Map<string, DataBinding>();
  for (const [ref, raw] of Object.entries(sources)) out.set(ref, validateBinding(ref, raw, origin));
  return out;
}

/** The implicit database of an unbound `local://` ref. */
export function localSourcePath(ref: string): string {
  const hex = createHash("sha256").update(ref, "utf8").digest("hex").slice(0, 16);
  return `.runx/data/local-sources/source-${hex}.sqlite`;
}

/** Everything binding resolution reads. */
export interface BindingEnv {
  workspaceRoot: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** A binding document's text, capped on its descriptor (a FIFO or a device is refused). */
function readBindingFile(file: string, shown: string): string {
  return readFileCappedSync({ path: file, shown, what: shown, maxBytes: 1024 * 1024 }).toString(
    "utf8",
  );
}

/** All configured bindings, env first (it wins for the same ref). */
export function configuredBindings(ctx: BindingEnv): Map<string, DataBinding> {
  const out = new Map<string, DataBinding>();
  const project = join(ctx.workspaceRoot, ".runx", "data-sources.json");
  if (existsSync(project)) {
    for (const [ref, b] of parseBindingDocument(
      readBindingFile(project, ".runx/data-sources.json"),
      ".runx/data-sources.json",
    ))
      out.set(ref, b);
  }
  const inline = ctx.env.RUNX_DATA_SOURCES;
  if (inline !== undefined && inline.trim() !== "") {
    let bindings: Map<string, DataBinding>;
    if (inline.trimStart().startsWith("{")) {
      bindings = parseBindingDocument(inline, "RUNX_DATA_SOURCES");
    } else {
      const file = isAbsolute(inline) ? inline : join(ctx.workspaceRoot, inline);
      let text: string;
      try {
        text = readBindingFile(file, inline);
      } catch (error) {
        if (error instanceof RuntimeError && error.code === "FILE_TOO_LARGE") throw error;
        return bad("RUNX_DATA_SOURCES", "$", `cannot read the binding file ${inline}`);
      }
      bindings = parseBindingDocument(text, `RUNX_DATA_SOURCES (${inline})`);
    }
    for (const [ref, b] of bindings) out.set(ref, b);
  }
  return out;
}

/** Resolves one ref to its binding; throws `needs_source` when it has none. */
export function resolveBinding(ref: string, ctx: BindingEnv): DataBinding {
  const configured = configuredBindings(ctx).get(ref);
  if (configured !== undefined) return configured;
  if (ref.startsWith("local://")) {
    return {
      adapter: "data.sqlite",
      database_path: localSourcePath(ref),
      profile: "local-durable",
      origin: "implicit local:// SQLite",
    };
  }
  return bad(
    "bindings",
    ref,
    `data source is not bound to a data adapter; add it to RUNX_DATA_SOURCES or .runx/data-sources.json`,
  );
}

/** Refuses a database path that crosses a symlink inside the workspace. */
function containedDatabase(root: string, relative: string): string {
  let current = root;
  for (const part of relative.split("/")) {
    current = join(current, part);
    if (existsSync(current) && lstatSync(current).isSymbolicLink()) {
      throw new DataStop(
        "needs_source",
        `database_path ${relative} crosses a symbolic link; refusing`,
      );
    }
  }
  return current.split("/").join(sep);
}

/** Opens the adapter a binding names. PostgreSQL and Redis load only when used. */
export async function openBinding(
  ref: string,
  binding: DataBinding,
  ctx: BindingEnv,
): Promise<DataAdapter> {
  switch (binding.adapter) {
    case "data.sqlite": {
      const { openSqliteAdapter } = await import("./sqlite.js");
      return openSqliteAdapter({
        path: containedDatabase(ctx.workspaceRoot, binding.database_path),
        label: binding.database_path,
      });
    }
    case "data.postgres": {
      const { openPostgresAdapter } = await import("./postgres.js");
      return openPostgresAdapter({
        endpoint: binding.endpoint,
        ...(binding.user !== undefined ? { user: binding.user } : {}),
        ...(ctx.env.PGPASSWORD !== undefined ? { password: ctx.env.PGPASSWORD } : {}),
      });
    }
    case "data.redis": {
      const { openRedisAdapter } = await import("./redis.js");
      return openRedisAdapter({ endpoint: binding.endpoint, keyPrefix: binding.key_prefix });
    }
  }
  void ref;
}

/** A non-secret view of a binding (for `runx data sources` and receipts). */
export function describeBinding(ref: string, binding: DataBinding): Record<string, string> {
  const out: Record<string, string> = {
    data_source_ref: ref,
    adapter: binding.adapter,
    origin: binding.origin,
  };
  if (binding.profile !== undefined) out.profile = binding.profile;
  if (binding.adapter === "data.sqlite") out.database_path = binding.database_path;
  if (binding.adapter === "data.postgres") out.endpoint = binding.endpoint;
  if (binding.adapter === "data.redis") {
    out.endpoint = binding.endpoint;
    out.key_prefix = binding.key_prefix;
  }
  return out;
}
