/**
 * Registry records: one JSON document per published version holding the whole package
 * (SKILL.md as `markdown`, X.yaml as `profile_document`, every other file in `package_files`),
 * its three digests and a publisher signature over the record's manifest.
 *
 * Digests: `digest` = sha256 of the SKILL.md bytes, `profile_digest` = sha256 of X.yaml (null
 * without one), `package_digest` = the package digest of all files. The manifest is
 * every identity field plus `files: [{path, sha256, bytes}]`; the signature is Ed25519 over
 * the ASCII bytes of `sha256:` + canonical-JSON digest of the manifest. Verification recomputes
 * every digest from the content first (a tampered file is a digest mismatch), then checks the
 * signature against the reader's trusted keys and the tier that key may sign.
 */
import { RuntimeError } from "../errors.js";
import { digestPackageEntries } from "../packages/digest.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { hashCanonical, sha256Prefixed } from "../receipts/canonical.js";
import { decodeBase64Flexible, ed25519Verify, encodeBase64UrlNoPad } from "../receipts/ed25519.js";
import { packagePathProblem } from "./files.js";
import type { PackageEntry } from "./files.js";
import { isTrustTier, tierAllowed } from "./keys.js";
import type { PublisherKey, TrustedKey, TrustTier } from "./keys.js";
import { isRegistrySlug, isRegistryVersion } from "./ref.js";

/** The record schema id. */
export const REGISTRY_RECORD_SCHEMA = "runx.registry.record.v1";
const MANIFEST_SCHEMA = "runx.registry.manifest.v1";

/** A file of the package other than SKILL.md and X.yaml. */
export type RecordFile =
  { path: string; content: string } | { path: string; content_base64: string };

/** Who published a record. */
export interface RecordPublisher {
  kind: "key";
  id: string;
  handle: string;
  public_key: string;
}

/** One published version. */
export interface RegistryRecord {
  schema: typeof REGISTRY_RECORD_SCHEMA;
  skill_id: string;
  owner: string;
  name: string;
  version: string;
  description: string | null;
  tags: string[];
  digest: string;
  markdown: string;
  profile_document: string | null;
  profile_digest: string | null;
  package_files: RecordFile[];
  package_digest: string;
  runner_names: string[];
  source_type: string;
  required_scopes: string[];
  trust_tier: TrustTier;
  publisher: RecordPublisher;
  created_at: string;
  signature?: { alg: "ed25519"; kid: string; value: string };
}

/** A record's identity and metadata, before signing. */
export type UnsignedRecord = Omit<RegistryRecord, "signature">;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function decodeText(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Stores a file as text when it is UTF-8 that round-trips, else as base64. */
export function recordFile(entry: PackageEntry): RecordFile {
  const text = decodeText(entry.content);
  if (text !== undefined && Buffer.from(text, "utf8").equals(Buffer.from(entry.content))) {
    return { path: entry.path, content: text };
  }
  return { path: entry.path, content_base64: Buffer.from(entry.content).toString("base64") };
}

/** Every file of a record as bytes, SKILL.md and X.yaml included. */
export function recordEntries(record: UnsignedRecord): PackageEntry[] {
  const entries: PackageEntry[] = [
    { path: "SKILL.md", content: Buffer.from(record.markdown, "utf8") },
  ];
  if (record.profile_document !== null) {
    entries.push({ path: "X.yaml", content: Buffer.from(record.profile_document, "utf8") });
  }
  for (const file of record.package_files) {
    entries.push({
      path: file.path,
      content:
        "content" in file
          ? Buffer.from(file.content, "utf8")
          : Buffer.from(file.content_base64, "base64"),
    });
  }
  return entries;
}

/** The signed manifest of a record: identity fields and per-file digests, no content. */
export function recordManifest(record: UnsignedRecord): JsonObject {
  return {
    schema: MANIFEST_SCHEMA,
    skill_id: record.skill_id,
    owner: record.owner,
    name: record.name,
    version: record.version,
    description: record.description,
    tags: record.tags,
    digest: record.digest,
    profile_digest: record.profile_digest,
    package_digest: record.package_digest,
    runner_names: record.runner_names,
    source_type: record.source_type,
    required_scopes: record.required_scopes,
    trust_tier: record.trust_tier,
    publisher: { ...record.publisher },
    created_at: record.created_at,
    files: recordEntries(record)
      .map((entry) => ({
        path: entry.path,
        sha256: sha256Prefixed(entry.content),
        bytes: entry.content.length,
      }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  };
}

/** Signs a record with the publisher key. */
export function signRecord(record: UnsignedRecord, key: PublisherKey): RegistryRecord {
  const digest = hashCanonical(recordManifest(record));
  return {
    ...record,
    signature: { alg: "ed25519", kid: key.kid, value: encodeBase64UrlNoPad(key.pair.sign(digest)) },
  };
}

function invalid(label: string, field: string, message: string): never {
  throw new RuntimeError("REGISTRY_INVALID", `${label}: ${field}: ${message}`, {
    ref: label,
    path: field,
  });
}

function str(doc: JsonObject, field: string, label: string): string {
  const value = doc[field];
  if (typeof value !== "string") invalid(label, field, "must be a string");
  return value;
}

function strOrNull(doc: JsonObject, field: string, label: string): string | null {
  const value = doc[field];
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") invalid(label, field, "must be a string or null");
  return value;
}

function strings(doc: JsonObject, field: string, label: string): string[] {
  const value = doc[field];
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    invalid(label, field, "must be a list of strings");
  }
  return value as string[];
}

function decodeFiles(doc: JsonObject, label: string): RecordFile[] {
  const raw = doc.package_files ?? [];
  if (!Array.isArray(raw)) invalid(label, "package_files", "must be a list");
  const seen = new Set<string>(["SKILL.md", "X.yaml"]);
  return raw.map((item, index): RecordFile => {
    const at = `package_files[${index}]`;
    if (!isJsonObject(item)) invalid(label, at, "must be an object");
    const entryPath = item.path;
    if (typeof entryPath !== "string") invalid(label, `${at}.path`, "must be a string");
    const problem = packagePathProblem(entryPath);
    if (problem !== undefined) {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        `${label}: package entry ${JSON.stringify(entryPath)} is refused: ${problem}`,
        { ref: label, path: `${at}.path` },
      );
    }
    const keys = Object.keys(item).filter((k) => k !== "path");
    if (item.type !== undefined && item.type !== "file") {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        `${label}: package entry ${entryPath} is a ${JSON.stringify(item.type)} entry; registry packages hold regular files only (no symlinks)`,
        { ref: label, path: `${at}.type` },
      );
    }
    const contentKeys = keys.filter((k) => k !== "type");
    if (contentKeys.length !== 1 || !["content", "content_base64"].includes(contentKeys[0] ?? "")) {
      invalid(label, at, "needs exactly one of content or content_base64 (and nothing else)");
    }
    if (seen.has(entryPath)) invalid(label, `${at}.path`, `duplicate entry ${entryPath}`);
    seen.add(entryPath);
    if (typeof item.content === "string") return { path: entryPath, content: item.content };
    const b64 = item.content_base64;
    if (typeof b64 !== "string" || Buffer.from(b64, "base64").toString("base64") !== b64) {
      invalid(label, `${at}.content_base64`, "must be canonical base64");
    }
    return { path: entryPath, content_base64: b64 };
  });
}

/** Checks the shape of a parsed record document. `label` names it in messages. */
export function decodeRecord(value: unknown, label: string): RegistryRecord {
  if (!isJsonObject(value)) invalid(label, "$", "a registry record must be a JSON object");
  if (value.schema !== REGISTRY_RECORD_SCHEMA) {
    invalid(label, "schema", `must be ${REGISTRY_RECORD_SCHEMA}`);
  }
  const owner = str(value, "owner", label);
  const name = str(value, "name", label);
  const version = str(value, "version", label);
  if (!isRegistrySlug(owner)) invalid(label, "owner", "is not a registry slug");
  if (!isRegistrySlug(name)) invalid(label, "name", "is not a registry slug");
  if (!isRegistryVersion(version)) invalid(label, "version", "is not a valid version");
  const skillId = str(value, "skill_id", label);
  if (skillId !== `${owner}/${name}`) invalid(label, "skill_id", "must be owner/name");
  const tier = value.trust_tier;
  if (!isTrustTier(tier))
    invalid(label, "trust_tier", "must be community, verified or first_party");
  const publisher = value.publisher;
  if (!isJsonObject(publisher)) invalid(label, "publisher", "must be an object");
  const record: RegistryRecord = {
    schema: REGISTRY_RECORD_SCHEMA,
    skill_id: skillId,
    owner,
    name,
    version,
    description: strOrNull(value, "description", label),
    tags: strings(value, "tags", label),
    digest: str(value, "digest", label),
    markdown: str(value, "markdown", label),
    profile_document: strOrNull(value, "profile_document", label),
    profile_digest: strOrNull(value, "profile_digest", label),
    package_files: decodeFiles(value, label),
    package_digest: str(value, "package_digest", label),
    runner_names: strings(value, "runner_names", label),
    source_type: str(value, "source_type", label),
    required_scopes: strings(value, "required_scopes", label),
    trust_tier: tier,
    publisher: {
      kind: "key",
      id: str(publisher, "id", `${label} publisher`),
      handle: str(publisher, "handle", `${label} publisher`),
      public_key: str(publisher, "public_key", `${label} publisher`),
    },
    created_at: str(value, "created_at", label),
  };
  const signature = value.signature;
  if (signature !== undefined && signature !== null) {
    if (
      !isJsonObject(signature) ||
      signature.alg !== "ed25519" ||
      typeof signature.kid !== "string" ||
      typeof signature.value !== "string"
    ) {
      invalid(label, "signature", "must be {alg: ed25519, kid, value}");
    }
    record.signature = { alg: "ed25519", kid: signature.kid, value: signature.value };
  }
  return record;
}

function mismatch(label: string, what: string, expected: string, received: string): never {
  throw new RuntimeError(
    "REGISTRY_DIGEST_MISMATCH",
    `Digest mismatch for ${label}: ${what} expected ${expected}, received ${received} (the package was altered after publishing)`,
    { ref: label, expected, received, field: what },
  );
}

/** Recomputes the three digests from the record's content; any difference is refused. */
export function checkRecordDigests(record: UnsignedRecord, label: string): void {
  const entries = recordEntries(record);
  const skill = sha256Prefixed(entries[0]?.content ?? new Uint8Array());
  if (record.digest !== skill) mismatch(label, "SKILL.md digest", record.digest, skill);
  const profile = record.profile_document === null ? null : sha256Prefixed(record.profile_document);
  if (record.profile_digest !== profile) {
    mismatch(label, "X.yaml digest", String(record.profile_digest), String(profile));
  }
  const pkg = digestPackageEntries(entries);
  if (record.package_digest !== pkg) mismatch(label, "package digest", record.package_digest, pkg);
}

function signatureError(label: string, message: string): never {
  throw new RuntimeError("REGISTRY_SIGNATURE_INVALID", `${label}: ${message}`, { ref: label });
}

/**
 * Verifies a record: digests from content, then (when `requireSignature`) a signature by a
 * trusted key that may sign the record's trust tier. A present signature is always checked.
 */
export function verifyRecord(
  record: RegistryRecord,
  label: string,
  trust: ReadonlyMap<string, TrustedKey>,
  options: { requireSignature: boolean },
): void {
  checkRecordDigests(record, label);
  const signature = record.signature;
  if (signature === undefined) {
    if (options.requireSignature) {
      signatureError(label, "the package is unsigned; a publisher signature is required");
    }
    return;
  }
  if (signature.kid !== record.publisher.id) {
    signatureError(label, "the signature key id does not match the publisher");
  }
  const key = trust.get(signature.kid);
  if (key === undefined) {
    signatureError(
      label,
      `signed by unknown key ${signature.kid}; trust it with RUNX_REGISTRY_TRUSTED_KEYS=<kid>:<public key>`,
    );
  }
  const claimed = decodeBase64Flexible(record.publisher.public_key);
  if (claimed === undefined || !Buffer.from(claimed).equals(Buffer.from(key.publicKey))) {
    signatureError(label, `the publisher key does not match the trusted key ${signature.kid}`);
  }
  const value = decodeBase64Flexible(signature.value);
  const digest = hashCanonical(recordManifest(record));
  if (value === undefined || !ed25519Verify(key.publicKey, digest, value)) {
    signatureError(label, "the signature does not verify (the record was altered after signing)");
  }
  if (!tierAllowed(record.trust_tier, key.maxTier)) {
    signatureError(
      label,
      `claims trust tier ${record.trust_tier}, but key ${signature.kid} is trusted only up to ${key.maxTier}`,
    );
  }
}
