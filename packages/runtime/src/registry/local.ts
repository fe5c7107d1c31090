/**
 * The local registry: `<root>/<encodeURIComponent(owner)>/<name>/<version>.json`,
 * one signed record per version. Package projection, publish, search, read, add (materialise
 * into a skills folder) and materialise-for-run (the `.runx/registry-step-skills` cache).
 *
 * Every refusal happens before the first write: records are verified (digests, signature,
 * trust tier, entry paths) in memory, and files are written into a temporary directory beside
 * the destination and renamed into place only once the written tree digests to the record
 * (`materialize.ts`). A package directory's record is built in `build-record.ts`.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { displayPath } from "../workspace.js";
import type { PackageEntry } from "./files.js";
import { isTrustTier, loadPublisherKey, tierAllowed, trustedKeys } from "./keys.js";
import type { TrustTier } from "./keys.js";
import { decodeRecord, signRecord, verifyRecord } from "./record.js";
import type { RegistryRecord, UnsignedRecord } from "./record.js";
import { formatRegistryRef, isRegistrySlug, parseRegistryRef } from "./ref.js";
import type { RegistryRef } from "./ref.js";
import { buildUnsignedRecord } from "./build-record.js";
import { checkExpectedDigest, materialize, safeDigest } from "./materialize.js";

/** Records larger than this are refused before parsing. */
const RECORD_MAX_BYTES = 8 * 1024 * 1024;

/** What the registry needs from its host. */
export interface LocalRegistryOptions {
  root: string;
  workspaceRoot: string;
  runxDir: string;
  runxHome: string;
  env: Readonly<Record<string, string | undefined>>;
  now: () => Date;
}

/** `runx registry package` output: the exact publish artifact, without content. */
export interface PackageProjection {
  schema: "runx.registry.package.v1";
  skill_id: string | null;
  owner: string | null;
  name: string;
  version: string;
  description: string | null;
  tags: string[];
  digest: string;
  profile_digest: string | null;
  package_digest: string;
  runner_names: string[];
  source_type: string;
  required_scopes: string[];
  files: Array<{ path: string; bytes: number; sha256: string }>;
  total_bytes: number;
}

/** `runx registry publish` output. */
export interface PublishResult {
  status: "published" | "unchanged";
  skill_id: string;
  version: string;
  digest: string;
  profile_digest: string | null;
  package_digest: string;
  trust_tier: TrustTier;
  publisher: { id: string; public_key: string };
  path: string;
}

/** One search hit. */
export interface SearchItem {
  skill_id: string;
  owner: string;
  name: string;
  description: string | null;
  version: string;
  digest: string;
  package_digest: string;
  trust_tier: TrustTier;
  source_type: string;
  runner_names: string[];
  tags: string[];
  required_scopes: string[];
  profile_mode: "profiled" | "portable";
  add_command: string;
  run_command: string;
}

/** `runx registry search` output. */
export interface SearchResult {
  query: string;
  items: SearchItem[];
  /** Latest versions that matched but failed verification, with the reason. */
  refused: Array<{ skill_id: string; version: string; code: string; reason: string }>;
}

/** `runx add` output. */
export interface InstallResult {
  status: "installed" | "unchanged";
  destination: string;
  skill_name: string;
  source: "local-registry";
  source_label: string;
  skill_id: string;
  version: string;
  digest: string;
  profile_digest: string | null;
  package_digest: string;
  runner_names: string[];
  trust_tier: TrustTier;
}

function compareRecords(a: RegistryRecord, b: RegistryRecord): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

/** The local registry over one root directory. */
export class LocalRegistry {
  readonly root: string;
  private readonly options: LocalRegistryOptions;

  constructor(options: LocalRegistryOptions) {
    this.options = options;
    this.root = path.resolve(options.root);
  }

  private shown(file: string): string {
    return displayPath(this.options.workspaceRoot, file);
  }

  private recordPath(owner: string, name: string, version: string): string {
    return path.join(this.root, encodeURIComponent(owner), name, `${version}.json`);
  }

  /** Builds the unsigned record for a package directory. Writes nothing. */
  buildRecord(
    dir: string,
    options: {
      owner?: string;
      version?: string;
      trustTier?: TrustTier;
      publisher?: RegistryRecord["publisher"];
    },
  ): Promise<{ record: UnsignedRecord; entries: PackageEntry[] }> {
    return buildUnsignedRecord(this.options, dir, options);
  }

  /** `runx registry package`: the exact file set and digests, without writing. */
  async package(
    dir: string,
    options: { owner?: string; version?: string },
  ): Promise<PackageProjection> {
    const { record, entries } = await this.buildRecord(dir, options);
    const files = entries
      .map((e) => ({ path: e.path, bytes: e.content.length, sha256: sha256Prefixed(e.content) }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return {
      schema: "runx.registry.package.v1",
      skill_id: options.owner === undefined ? null : record.skill_id,
      owner: options.owner ?? null,
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
      files,
      total_bytes: files.reduce((n, f) => n + f.bytes, 0),
    };
  }

  /** `runx registry publish`: signs the package and writes its record. */
  async publish(
    dir: string,
    options: { owner: string; version?: string; trustTier?: TrustTier; upsert?: boolean },
  ): Promise<PublishResult> {
    const tier = options.trustTier ?? "community";
    if (!isTrustTier(tier)) {
      throw new RuntimeError("USAGE", "--trust-tier must be community, verified or first_party");
    }
    const { env, runxHome } = this.options;
    // Validate the package (and refuse bad tiers) before a key file is ever created.
    await this.buildRecord(dir, options);
    const key = loadPublisherKey(env, runxHome, { create: true });
    if (key === undefined) throw new RuntimeError("INTERNAL", "no publisher key");
    const maxTier = trustedKeys(env, runxHome).get(key.kid)?.maxTier ?? "community";
    if (!tierAllowed(tier, maxTier)) {
      throw new RuntimeError(
        "REGISTRY_SIGNATURE_INVALID",
        `publisher key ${key.kid} may sign up to trust tier ${maxTier}, not ${tier}; promotion is out-of-band (RUNX_REGISTRY_TRUSTED_KEYS=${key.kid}:<public key>:${tier})`,
        { kid: key.kid },
      );
    }
    const { record } = await this.buildRecord(dir, {
      ...options,
      trustTier: tier,
      publisher: { kind: "key", id: key.kid, handle: options.owner, public_key: key.publicKey },
    });
    const file = this.recordPath(record.owner, record.name, record.version);
    const label = formatRegistryRef({ skillId: record.skill_id, version: record.version });
    const existing = this.readRecordFile(file, label);
    if (existing !== undefined) {
      const same =
        existing.package_digest === record.package_digest &&
        existing.trust_tier === record.trust_tier &&
        existing.publisher.id === record.publisher.id;
      if (same) return this.publishResult("unchanged", existing, file);
      if (options.upsert !== true) {
        throw new RuntimeError(
          "REGISTRY_CONFLICT",
          `${label} is already published with different content (${existing.package_digest}); publish a new version or pass --upsert`,
          { ref: label, published: existing.package_digest, package_digest: record.package_digest },
        );
      }
    }
    const signed = signRecord(record, key);
    // The record must verify for a reader with the same trust before it is written.
    verifyRecord(signed, label, trustedKeys(env, runxHome), { requireSignature: true });
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(signed, null, 2)}\n`);
    renameSync(tmp, file);
    return this.publishResult("published", signed, file);
  }

  private publishResult(
    status: PublishResult["status"],
    record: RegistryRecord,
    file: string,
  ): PublishResult {
    return {
      status,
      skill_id: record.skill_id,
      version: record.version,
      digest: record.digest,
      profile_digest: record.profile_digest,
      package_digest: record.package_digest,
      trust_tier: record.trust_tier,
      publisher: { id: record.publisher.id, public_key: record.publisher.public_key },
      path: this.shown(file),
    };
  }

  /** Reads and shape-checks one record file; undefined when it does not exist. */
  private readRecordFile(file: string, label: string): RegistryRecord | undefined {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch {
      return undefined;
    }
    if (raw.length > RECORD_MAX_BYTES) {
      throw new RuntimeError("REGISTRY_INVALID", `${label}: the registry record is too large`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString("utf8"));
    } catch {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        `${label}: the registry record is not valid JSON`,
        {
          ref: label,
        },
      );
    }
    return decodeRecord(parsed, label);
  }

  /** Every version file of a skill (undecoded). */
  private versionFiles(owner: string, name: string): string[] {
    const dir = path.join(this.root, encodeURIComponent(owner), name);
    try {
      return readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .map((f) => path.join(dir, f));
    } catch {
      return [];
    }
  }

  /** The record a ref names (latest when it has no version), verified. */
  read(
    refText: string | RegistryRef,
    options: { requireSignature?: boolean } = {},
  ): RegistryRecord {
    const ref = typeof refText === "string" ? parseRegistryRef(refText) : refText;
    const trust = trustedKeys(this.options.env, this.options.runxHome);
    let record: RegistryRecord | undefined;
    if (ref.version !== undefined) {
      record = this.readRecordFile(
        this.recordPath(ref.owner, ref.name, ref.version),
        formatRegistryRef(ref),
      );
    } else {
      const all = this.versionFiles(ref.owner, ref.name).map((file) =>
        this.readRecordFile(file, `${ref.skillId}@${path.basename(file, ".json")}`),
      );
      record = all
        .filter((r): r is RegistryRecord => r !== undefined)
        .sort(compareRecords)
        .at(-1);
    }
    if (record === undefined) {
      throw new RuntimeError(
        "REGISTRY_NOT_FOUND",
        `${formatRegistryRef(ref)} is not in the registry at ${this.shown(this.root)}`,
        { ref: formatRegistryRef(ref) },
      );
    }
    const label = formatRegistryRef({ skillId: record.skill_id, version: record.version });
    if (
      record.skill_id !== ref.skillId ||
      (ref.version !== undefined && record.version !== ref.version)
    ) {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        `${formatRegistryRef(ref)}: the record names ${label} (a record was moved or altered)`,
        { ref: formatRegistryRef(ref) },
      );
    }
    verifyRecord(record, label, trust, { requireSignature: options.requireSignature ?? true });
    return record;
  }

  /** `runx registry search`: substring match over the latest version of each skill. */
  search(query: string, options: { limit?: number } = {}): SearchResult {
    const needle = query.trim().toLowerCase();
    const limit = options.limit ?? 20;
    const items: SearchItem[] = [];
    const refused: SearchResult["refused"] = [];
    const owners = this.listDir(this.root);
    for (const ownerDir of owners) {
      let owner: string;
      try {
        owner = decodeURIComponent(ownerDir);
      } catch {
        continue;
      }
      if (!isRegistrySlug(owner)) continue;
      for (const name of this.listDir(path.join(this.root, ownerDir))) {
        if (!isRegistrySlug(name)) continue;
        const ref: RegistryRef = { owner, name, skillId: `${owner}/${name}` };
        let record: RegistryRecord;
        try {
          record = this.read(ref);
        } catch (error) {
          if (!isRuntimeError(error) || error.code === "REGISTRY_NOT_FOUND") continue;
          if (ref.skillId.includes(needle)) {
            refused.push({
              skill_id: ref.skillId,
              version:
                typeof error.details.ref === "string"
                  ? (error.details.ref.split("@")[1] ?? "")
                  : "",
              code: error.code,
              reason: error.message,
            });
          }
          continue;
        }
        const haystack = [
          record.skill_id,
          record.name,
          record.description ?? "",
          record.owner,
          record.source_type,
          ...record.runner_names,
          ...record.tags,
        ]
          .join("\n")
          .toLowerCase();
        if (needle !== "" && !haystack.includes(needle)) continue;
        const at = `${record.skill_id}@${record.version}`;
        items.push({
          skill_id: record.skill_id,
          owner: record.owner,
          name: record.name,
          description: record.description,
          version: record.version,
          digest: record.digest,
          package_digest: record.package_digest,
          trust_tier: record.trust_tier,
          source_type: record.source_type,
          runner_names: record.runner_names,
          tags: record.tags,
          required_scopes: record.required_scopes,
          profile_mode: record.profile_document === null ? "portable" : "profiled",
          add_command: `runx add ${at}`,
          run_command: `runx skill ${at}`,
        });
      }
    }
    items.sort((a, b) => (a.skill_id < b.skill_id ? -1 : a.skill_id > b.skill_id ? 1 : 0));
    return { query, items: items.slice(0, limit), refused };
  }

  private listDir(dir: string): string[] {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch {
      return [];
    }
  }

  /** `runx add`: materialises a verified package into `<to>/<owner>/<name>`. */
  add(refText: string, options: { to?: string; digest?: string }): InstallResult {
    const ref = parseRegistryRef(refText);
    const record = this.read(ref);
    const label = `${record.skill_id}@${record.version}`;
    checkExpectedDigest(record, label, options.digest);
    const to = path.resolve(this.options.workspaceRoot, options.to ?? "skills");
    const destination = path.join(to, record.owner, record.name);
    const status = materialize(record, destination, label);
    return {
      status,
      destination: this.shown(destination),
      skill_name: record.name,
      source: "local-registry",
      source_label: this.shown(this.root),
      skill_id: record.skill_id,
      version: record.version,
      digest: record.digest,
      profile_digest: record.profile_digest,
      package_digest: record.package_digest,
      runner_names: record.runner_names,
      trust_tier: record.trust_tier,
    };
  }

  /**
   * Materialises a verified package into `.runx/registry-step-skills/<16-hex>/<name>` for a
   * run (`runx skill owner/name@version`, graph `skill: registry:…` steps).
   */
  materializeForRun(
    refText: string,
    options: { digest?: string } = {},
  ): { packageDir: string; record: RegistryRecord } {
    const record = this.read(parseRegistryRef(refText));
    const label = `${record.skill_id}@${record.version}`;
    checkExpectedDigest(record, label, options.digest);
    const fingerprint = createHash("sha256")
      .update(`${label}\0${record.package_digest}`)
      .digest("hex")
      .slice(0, 16);
    const packageDir = path.join(
      this.options.runxDir,
      "registry-step-skills",
      fingerprint,
      record.name,
    );
    if (existsSync(packageDir) && safeDigest(packageDir) !== record.package_digest) {
      // The cache is generated; a copy that no longer matches is replaced, never run.
      rmSync(packageDir, { recursive: true, force: true });
    }
    materialize(record, packageDir, label);
    return { packageDir, record };
  }
}
