/**
 * The local registry: `<root>/<encodeURIComponent(owner)>/<name>/<version>.json`,
 * one signed record per version. Package projection, publish, search, read, add (materialise
 * into a skills folder) and materialise-for-run (the `.runx/registry-step-skills` cache).
 *
 * Every refusal happens before the first write: records are verified (digests, signature,
 * trust tier, entry paths) in memory, and files are written into a temporary directory beside
 * the destination and renamed into place only once the written tree digests to the record.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { computePackageDigest, digestPackageEntries } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import { loadSkillPackage } from "../packages/resolve.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { displayPath, ensureStateDir } from "../workspace.js";
import { readPackageEntries } from "./files.js";
import type { PackageEntry } from "./files.js";
import { isTrustTier, loadPublisherKey, tierAllowed, trustedKeys } from "./keys.js";
import type { TrustTier } from "./keys.js";
import {
  decodeRecord,
  recordEntries,
  recordFile,
  REGISTRY_RECORD_SCHEMA,
  signRecord,
  verifyRecord,
} from "./record.js";
import type { RegistryRecord, UnsignedRecord } from "./record.js";
import { formatRegistryRef, isRegistrySlug, isRegistryVersion, parseRegistryRef } from "./ref.js";
import type { RegistryRef } from "./ref.js";

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

function tagsOf(frontmatter: JsonObject): string[] {
  const runx = frontmatter.runx;
  const raw = runx !== undefined && isJsonObject(runx) ? runx.tags : undefined;
  const list = Array.isArray(raw) ? raw : Array.isArray(frontmatter.tags) ? frontmatter.tags : [];
  return list.filter((t): t is string => typeof t === "string");
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
  async buildRecord(
    dir: string,
    options: {
      owner?: string;
      version?: string;
      trustTier?: TrustTier;
      publisher?: RegistryRecord["publisher"];
    },
  ): Promise<{ record: UnsignedRecord; entries: PackageEntry[] }> {
    const packageDir = path.resolve(this.options.workspaceRoot, dir);
    const resolved = await resolveSkillRef(packageDir, {
      workspaceRoot: this.options.workspaceRoot,
    });
    if (resolved.graphDocumentPath !== undefined) {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        "only skill package directories are published, not standalone graph documents",
        { file: this.shown(packageDir) },
      );
    }
    const pkg = await loadSkillPackage(resolved);
    if (!isRegistrySlug(pkg.name)) {
      throw new RuntimeError(
        "REGISTRY_INVALID",
        `skill name '${pkg.name}' cannot be a registry name (lowercase letters, digits and -)`,
        { file: this.shown(resolved.skillMdPath), path: "name" },
      );
    }
    if (options.owner !== undefined && !isRegistrySlug(options.owner)) {
      throw new RuntimeError(
        "USAGE",
        `--owner '${options.owner}' is not a registry slug (lowercase letters, digits and -)`,
      );
    }
    const entries = readPackageEntries(resolved.packageDir);
    const byPath = new Map(entries.map((e) => [e.path, e]));
    const skillMd = byPath.get("SKILL.md");
    if (skillMd === undefined) {
      throw new RuntimeError("REGISTRY_INVALID", "the package has no SKILL.md");
    }
    const profile = byPath.get("X.yaml");
    const markdown = Buffer.from(skillMd.content).toString("utf8");
    const profileText =
      profile === undefined ? null : Buffer.from(profile.content).toString("utf8");
    const declared = pkg.profile?.version;
    const packageDigest = digestPackageEntries(entries);
    const version =
      options.version ?? declared ?? `sha-${packageDigest.slice("sha256:".length, 19)}`;
    if (!isRegistryVersion(version)) {
      throw new RuntimeError(
        "USAGE",
        `version '${version}' is not valid ([A-Za-z0-9._+-], at most 128 characters)`,
      );
    }
    const runners = Object.values(pkg.runners);
    const defaultRunner = runners.find((r) => r.default === true) ?? runners[0];
    const owner = options.owner ?? "";
    const record: UnsignedRecord = {
      schema: REGISTRY_RECORD_SCHEMA,
      skill_id: `${owner}/${pkg.name}`,
      owner,
      name: pkg.name,
      version,
      description: pkg.description ?? null,
      tags: tagsOf(pkg.frontmatter),
      digest: sha256Prefixed(skillMd.content),
      markdown,
      profile_document: profileText,
      profile_digest: profile === undefined ? null : sha256Prefixed(profile.content),
      package_files: entries
        .filter((e) => e.path !== "SKILL.md" && e.path !== "X.yaml")
        .map(recordFile),
      package_digest: packageDigest,
      runner_names: Object.keys(pkg.runners),
      source_type: defaultRunner?.type ?? "agent",
      required_scopes: [...new Set(runners.flatMap((r) => r.scopes))].sort(),
      trust_tier: options.trustTier ?? "community",
      publisher: options.publisher ?? { kind: "key", id: "", handle: owner, public_key: "" },
      created_at: this.options.now().toISOString(),
    };
    // The stored text must reproduce the bytes the package digest was computed over.
    if (Buffer.from(markdown, "utf8").length !== skillMd.content.length) {
      throw new RuntimeError("REGISTRY_INVALID", "SKILL.md is not valid UTF-8");
    }
    return { record, entries };
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

function safeDigest(dir: string): string | undefined {
  try {
    return computePackageDigest(dir);
  } catch {
    return undefined;
  }
}

function checkExpectedDigest(record: RegistryRecord, label: string, expected?: string): void {
  if (expected === undefined) return;
  const want = expected.startsWith("sha256:")
    ? expected.toLowerCase()
    : `sha256:${expected.toLowerCase()}`;
  if (want !== record.package_digest) {
    throw new RuntimeError(
      "REGISTRY_DIGEST_MISMATCH",
      `Digest mismatch for ${label}: expected ${want}, received ${record.package_digest}`,
      { ref: label, expected: want, received: record.package_digest },
    );
  }
}

/**
 * Writes a verified record's files to `destination` through a temporary sibling directory.
 * An existing destination with the same package digest is left alone (`unchanged`); one with
 * different content is refused.
 */
function materialize(
  record: RegistryRecord,
  destination: string,
  label: string,
): "installed" | "unchanged" {
  if (existsSync(destination)) {
    if (!statSync(destination).isDirectory() || safeDigest(destination) !== record.package_digest) {
      throw new RuntimeError(
        "REGISTRY_CONFLICT",
        `${label}: the destination already exists with different content; remove it first`,
        { ref: label },
      );
    }
    return "unchanged";
  }
  const parent = path.dirname(destination);
  // A symlinked `.runx/registry-step-skills` is refused, not written through.
  ensureStateDir(parent);
  const tmp = mkdtempSync(path.join(parent, ".runx-add-"));
  try {
    for (const entry of recordEntries(record)) {
      const target = path.join(tmp, ...entry.path.split("/"));
      const rel = path.relative(tmp, target);
      if (rel.startsWith("..") || path.isAbsolute(rel)) {
        throw new RuntimeError("REGISTRY_INVALID", `${label}: package entry ${entry.path} escapes`);
      }
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, entry.content, { flag: "wx" });
    }
    const written = computePackageDigest(tmp);
    if (written !== record.package_digest) {
      throw new RuntimeError(
        "REGISTRY_DIGEST_MISMATCH",
        `Digest mismatch for ${label}: expected ${record.package_digest}, received ${written}`,
        { ref: label },
      );
    }
    try {
      renameSync(tmp, destination);
    } catch (error) {
      // Another process materialised the same package first: identical content is fine.
      if (existsSync(destination) && safeDigest(destination) === record.package_digest) {
        rmSync(tmp, { recursive: true, force: true });
        return "unchanged";
      }
      throw error;
    }
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  return "installed";
}
