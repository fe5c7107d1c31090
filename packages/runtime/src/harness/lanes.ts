/**
 * Validation of a fixture's replay lanes: `caller.http_responses`,
 * `caller.http_exchanges`, `caller.provider_responses` and `setup.receipts`. Pure: values
 * in, typed lanes out; every error names the field. The lanes themselves run in
 * tools/http/fixture-http.ts and tools/provider/provider-lane.ts.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { canonicalJson } from "../receipts/canonical.js";
import type {
  FixtureHttpExchange,
  FixtureHttpLanes,
  FixtureHttpResponse,
} from "../tools/http/fixture-http.js";
import type {
  ProviderLane,
  ProviderLaneGrant,
  ProviderLaneOperation,
} from "../tools/provider/provider-lane.js";

/** The lanes' caps (docs/skills-and-runners.md, Harness fixtures). */
export const LANE_LIMITS = {
  httpResponses: 32,
  httpExchanges: 32,
  headers: 64,
  bodyBytes: 1024 * 1024,
  urlChars: 2048,
  grants: 16,
  operations: 32,
  seedReceipts: 32,
  seedPathChars: 512,
} as const;

const EXCHANGE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function invalid(path: string, message: string): RuntimeError {
  return new RuntimeError("HARNESS_INVALID", `${path}: ${message}`, { path });
}

function nonEmptyString(value: JsonValue | undefined, path: string): string {
  if (typeof value !== "string" || value === "") throw invalid(path, "must be a non-empty string");
  return value;
}

/** Checks and canonicalizes a fixture URL the way admission canonicalizes the final URL. */
function fixtureUrl(raw: string, path: string): string {
  if (raw.length > LANE_LIMITS.urlChars) {
    throw invalid(path, `URL is longer than ${LANE_LIMITS.urlChars} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(path, "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalid(path, "must be an absolute http(s) URL");
  }
  if (url.username !== "" || url.password !== "") {
    throw invalid(path, "a fixture URL may not carry credentials");
  }
  if (raw.includes("#")) throw invalid(path, "a fixture URL may not carry a fragment");
  return url.href;
}

function encodeBody(
  value: JsonValue | undefined,
  path: string,
): { bytes: Uint8Array; json: boolean } {
  if (value === undefined || value === null) return { bytes: new Uint8Array(), json: false };
  const json = typeof value !== "string";
  const bytes = new TextEncoder().encode(json ? canonicalJson(value) : value);
  if (bytes.byteLength > LANE_LIMITS.bodyBytes) {
    throw invalid(path, `body is larger than ${LANE_LIMITS.bodyBytes} bytes`);
  }
  return { bytes, json };
}

function parseResponse(raw: JsonValue | undefined, path: string): FixtureHttpResponse {
  if (!isJsonObject(raw)) throw invalid(path, "must be a mapping with status, headers and body");
  for (const key of Object.keys(raw)) {
    if (!["status", "headers", "body"].includes(key)) {
      throw invalid(`${path}.${key}`, "unknown response field");
    }
  }
  const status = raw.status ?? 200;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw invalid(`${path}.status`, "must be an integer from 100 to 599");
  }
  const headers: Record<string, string> = {};
  const rawHeaders = raw.headers ?? {};
  if (!isJsonObject(rawHeaders)) throw invalid(`${path}.headers`, "must be a mapping");
  const names = Object.keys(rawHeaders);
  if (names.length > LANE_LIMITS.headers) {
    throw invalid(`${path}.headers`, `at most ${LANE_LIMITS.headers} headers`);
  }
  for (const name of names) {
    const value = rawHeaders[name];
    if (!HEADER_NAME.test(name)) throw invalid(`${path}.headers.${name}`, "is not a header name");
    if (typeof value !== "string" || /[\r\n\0]/.test(value)) {
      throw invalid(`${path}.headers.${name}`, "must be a single-line string");
    }
    headers[name.toLowerCase()] = value;
  }
  const body = encodeBody(raw.body, `${path}.body`);
  if (body.json && headers["content-type"] === undefined) {
    headers["content-type"] = "application/json";
  }
  return { status, headers, body: body.bytes };
}

function parseExchange(raw: JsonValue, path: string): FixtureHttpExchange {
  if (!isJsonObject(raw)) throw invalid(path, "must be a mapping with request and response");
  for (const key of Object.keys(raw)) {
    if (key !== "request" && key !== "response") {
      throw invalid(`${path}.${key}`, "unknown exchange field");
    }
  }
  const request = raw.request;
  if (!isJsonObject(request)) throw invalid(`${path}.request`, "must be a mapping");
  for (const key of Object.keys(request)) {
    if (!["method", "url", "body"].includes(key)) {
      throw invalid(`${path}.request.${key}`, "unknown request field");
    }
  }
  const method = request.method;
  if (typeof method !== "string" || !EXCHANGE_METHODS.includes(method)) {
    throw invalid(`${path}.request.method`, `must be one of ${EXCHANGE_METHODS.join(", ")}`);
  }
  const url = fixtureUrl(nonEmptyString(request.url, `${path}.request.url`), `${path}.request.url`);
  let body: FixtureHttpExchange["request"]["body"] = { kind: "none" };
  const rawBody = request.body;
  if (rawBody !== undefined && rawBody !== "none") {
    if (!isJsonObject(rawBody) || Object.keys(rawBody).join() !== "json") {
      throw invalid(`${path}.request.body`, 'must be "none" or {json: <value>}');
    }
    body = { kind: "json", value: rawBody.json ?? null };
  }
  return {
    request: { method, url, body },
    response: parseResponse(raw.response, `${path}.response`),
  };
}

/** Validates `caller.http_responses` / `caller.http_exchanges`; undefined when neither is set. */
export function parseHttpLanes(caller: JsonObject): FixtureHttpLanes | undefined {
  const rawResponses = caller.http_responses;
  const rawExchanges = caller.http_exchanges;
  if (rawResponses === undefined && rawExchanges === undefined) return undefined;
  const responses = new Map<string, FixtureHttpResponse>();
  if (rawResponses !== undefined && rawResponses !== null) {
    if (!isJsonObject(rawResponses)) {
      throw invalid("caller.http_responses", "must be a mapping of URL to response");
    }
    const urls = Object.keys(rawResponses);
    if (urls.length > LANE_LIMITS.httpResponses) {
      throw invalid("caller.http_responses", `at most ${LANE_LIMITS.httpResponses} URLs`);
    }
    for (const raw of urls) {
      const path = `caller.http_responses.${raw}`;
      const url = fixtureUrl(raw, path);
      if (responses.has(url)) throw invalid(path, `duplicates another entry for ${url}`);
      responses.set(url, parseResponse(rawResponses[raw], path));
    }
  }
  const exchanges: FixtureHttpExchange[] = [];
  if (rawExchanges !== undefined && rawExchanges !== null) {
    if (!Array.isArray(rawExchanges)) {
      throw invalid("caller.http_exchanges", "must be a list of {request, response}");
    }
    if (rawExchanges.length > LANE_LIMITS.httpExchanges) {
      throw invalid("caller.http_exchanges", `at most ${LANE_LIMITS.httpExchanges} exchanges`);
    }
    rawExchanges.forEach((raw, i) =>
      exchanges.push(parseExchange(raw, `caller.http_exchanges[${i}]`)),
    );
  }
  return { responses, exchanges };
}

function stringList(value: JsonValue | undefined, path: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item !== "")) {
    throw invalid(path, "must be a list of non-empty strings");
  }
  return value as string[];
}

/** Validates `caller.provider_responses`; undefined when absent. */
export function parseProviderLane(caller: JsonObject): ProviderLane | undefined {
  const raw = caller.provider_responses;
  if (raw === undefined) return undefined;
  const at = "caller.provider_responses";
  if (!isJsonObject(raw))
    throw invalid(at, "must be a mapping with principal_id, grants, operations");
  for (const key of Object.keys(raw)) {
    if (!["principal_id", "grants", "operations"].includes(key)) {
      throw invalid(`${at}.${key}`, "unknown field");
    }
  }
  const principal = nonEmptyString(raw.principal_id, `${at}.principal_id`);
  const rawGrants = raw.grants;
  if (!Array.isArray(rawGrants) || rawGrants.length < 1 || rawGrants.length > LANE_LIMITS.grants) {
    throw invalid(`${at}.grants`, `must list 1 to ${LANE_LIMITS.grants} grants`);
  }
  const grants: ProviderLaneGrant[] = rawGrants.map((grant, i) => {
    const path = `${at}.grants[${i}]`;
    if (!isJsonObject(grant)) throw invalid(path, "must be a mapping");
    for (const key of Object.keys(grant)) {
      if (!["grant_id", "provider", "scopes"].includes(key)) {
        throw invalid(`${path}.${key}`, "unknown grant field");
      }
    }
    return {
      grant_id: nonEmptyString(grant.grant_id, `${path}.grant_id`),
      provider: nonEmptyString(grant.provider, `${path}.provider`),
      scopes: stringList(grant.scopes ?? [], `${path}.scopes`),
    };
  });
  const ids = new Set<string>();
  grants.forEach((grant, i) => {
    if (ids.has(grant.grant_id)) {
      throw invalid(`${at}.grants[${i}].grant_id`, `duplicate grant id ${grant.grant_id}`);
    }
    ids.add(grant.grant_id);
  });
  const rawOps = raw.operations;
  if (!Array.isArray(rawOps) || rawOps.length < 1 || rawOps.length > LANE_LIMITS.operations) {
    throw invalid(`${at}.operations`, `must list 1 to ${LANE_LIMITS.operations} operations`);
  }
  const operations: ProviderLaneOperation[] = rawOps.map((op, i) => {
    const path = `${at}.operations[${i}]`;
    if (!isJsonObject(op)) throw invalid(path, "must be a mapping");
    for (const key of Object.keys(op)) {
      if (!["grant_id", "operation", "target", "access", "result"].includes(key)) {
        throw invalid(`${path}.${key}`, "unknown operation field");
      }
    }
    const grantId = nonEmptyString(op.grant_id, `${path}.grant_id`);
    if (!ids.has(grantId)) throw invalid(`${path}.grant_id`, `no declared grant ${grantId}`);
    if (op.access !== "read" && op.access !== "mutate") {
      throw invalid(`${path}.access`, "must be read or mutate");
    }
    const result = op.result ?? {};
    if (!isJsonObject(result)) throw invalid(`${path}.result`, "must be a mapping");
    return {
      grant_id: grantId,
      operation: nonEmptyString(op.operation, `${path}.operation`),
      target: nonEmptyString(op.target, `${path}.target`),
      access: op.access,
      result: result,
    };
  });
  return { principal_id: principal, grants, operations };
}

/** Validates `setup.receipts`: normalized package-relative `.json` paths. */
export function parseSeedReceipts(setup: JsonObject): string[] {
  for (const key of Object.keys(setup)) {
    if (key !== "receipts") throw invalid(`setup.${key}`, "unknown setup field");
  }
  const raw = setup.receipts;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid("setup.receipts", "must be a list of paths");
  if (raw.length > LANE_LIMITS.seedReceipts) {
    throw invalid("setup.receipts", `at most ${LANE_LIMITS.seedReceipts} receipts`);
  }
  return raw.map((item, i) => {
    const path = `setup.receipts[${i}]`;
    if (typeof item !== "string" || item === "") throw invalid(path, "must be a path");
    if (item.length > LANE_LIMITS.seedPathChars) {
      throw invalid(path, `is longer than ${LANE_LIMITS.seedPathChars} characters`);
    }
    const segments = item.split("/");
    const normalized =
      !item.startsWith("/") &&
      !item.includes("\\") &&
      !item.includes("\0") &&
      segments.every((s) => s !== "" && s !== "." && s !== "..");
    if (!normalized) {
      throw invalid(path, `${JSON.stringify(item)} is not a normalized package-relative path`);
    }
    if (!item.endsWith(".json")) throw invalid(path, "must name a .json receipt file");
    return item;
  });
}
