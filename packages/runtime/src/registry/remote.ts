/**
 * The remote registry acquisition body (`{status, install_count, acquisition: {…}}`, upstream
 * fixture `fixtures/registry/remote/acquire-success.json`). This runtime has no network
 * registry client; the parser exists so an acquisition can be checked with the same digest and
 * signature rules as a local record before anything is materialised. Pure.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { isTrustTier } from "./keys.js";
import { decodeRecord, REGISTRY_RECORD_SCHEMA } from "./record.js";
import type { RegistryRecord } from "./record.js";

/** A parsed acquisition. */
export interface RemoteAcquisition {
  installCount: number;
  /** The acquisition as a registry record (signature present only when the body carries one). */
  record: RegistryRecord;
  /** The publisher as the remote registry describes it. */
  publisher: { kind: string; id: string; handle: string };
  attestations: unknown[];
}

function fail(message: string): never {
  throw new RuntimeError("REGISTRY_INVALID", `remote acquisition: ${message}`);
}

/** Parses an acquisition response body; refuses anything that is not a success. */
export function parseRemoteAcquisition(body: unknown): RemoteAcquisition {
  if (!isJsonObject(body)) fail("the body is not a JSON object");
  if (body.status !== "success") fail(`status is ${JSON.stringify(body.status)}, not "success"`);
  const count = body.install_count;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
    fail("install_count must be a non-negative integer");
  }
  const acquisition = body.acquisition;
  if (!isJsonObject(acquisition)) fail("acquisition must be an object");
  const publisher = acquisition.publisher;
  if (
    !isJsonObject(publisher) ||
    typeof publisher.kind !== "string" ||
    typeof publisher.id !== "string" ||
    typeof publisher.handle !== "string"
  ) {
    return fail("acquisition.publisher must be {kind, id, handle}");
  }
  if (!isTrustTier(acquisition.trust_tier)) fail("acquisition.trust_tier is not a trust tier");
  const frontmatterDescription = (): string | null =>
    typeof acquisition.description === "string" ? acquisition.description : null;
  const shaped: JsonObject = {
    schema: REGISTRY_RECORD_SCHEMA,
    skill_id: acquisition.skill_id ?? null,
    owner: acquisition.owner ?? null,
    name: acquisition.name ?? null,
    version: acquisition.version ?? null,
    description: frontmatterDescription(),
    tags: acquisition.tags ?? [],
    digest: acquisition.digest ?? null,
    markdown: acquisition.markdown ?? null,
    profile_document: acquisition.profile_document ?? null,
    profile_digest: acquisition.profile_digest ?? null,
    package_files: acquisition.package_files ?? [],
    package_digest: acquisition.package_digest ?? null,
    runner_names: acquisition.runner_names ?? [],
    source_type: typeof acquisition.source_type === "string" ? acquisition.source_type : "remote",
    required_scopes: acquisition.required_scopes ?? [],
    trust_tier: acquisition.trust_tier,
    publisher: {
      kind: "key",
      id: publisher.id,
      handle: publisher.handle,
      public_key: typeof publisher.public_key === "string" ? publisher.public_key : "",
    },
    created_at: typeof acquisition.created_at === "string" ? acquisition.created_at : "",
    ...(acquisition.signature !== undefined ? { signature: acquisition.signature } : {}),
  };
  const record = decodeRecord(shaped, "remote acquisition");
  return {
    installCount: count,
    record,
    publisher: { kind: publisher.kind, id: publisher.id, handle: publisher.handle },
    attestations: Array.isArray(acquisition.attestations) ? acquisition.attestations : [],
  };
}
