/**
 * The replay lanes of an upstream harness fixture, checked as upstream checks them: the exact
 * HTTP responses a case serves (`caller.http_responses`), the provider operations it answers
 * (`caller.provider_responses`) and the receipt files it seeds (`setup.receipts`), each with
 * upstream's caps and sentences. The runtime's own lane validation is harness/lanes.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { serdeKind } from "./fields.js";
import {
  SerdeError,
  anyValue,
  fail,
  harnessInvalid,
  list,
  required,
  string,
  stringMap,
  struct,
  text,
  variant,
} from "./serde.js";

/** Exact HTTP responses a harness serves (`caller.http_responses`). */
export function httpResponses(value: JsonValue | undefined, field: string): JsonObject {
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

/** The receipts a case seeds its store with (`setup.receipts`): normalized package-relative paths. */
export function receiptPaths(value: JsonValue | undefined): JsonObject {
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

/** The provider operations a harness answers from (`caller.provider_responses`). */
export function providerResponses(value: JsonValue | undefined, field: string): void {
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
