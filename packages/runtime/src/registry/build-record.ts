/**
 * The unsigned registry record of a skill package directory: its files, digests, version,
 * runners and scopes, computed without writing anything.
 */
import path from "node:path";
import { RuntimeError } from "../errors.js";
import { digestPackageEntries } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import { loadSkillPackage } from "../packages/resolve.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { displayPath } from "../workspace.js";
import { readPackageEntries } from "./files.js";
import type { PackageEntry } from "./files.js";
import type { TrustTier } from "./keys.js";
import { recordFile, REGISTRY_RECORD_SCHEMA } from "./record.js";
import type { RegistryRecord, UnsignedRecord } from "./record.js";
import { isRegistrySlug, isRegistryVersion } from "./ref.js";

function tagsOf(frontmatter: JsonObject): string[] {
  const runx = frontmatter.runx;
  const raw = runx !== undefined && isJsonObject(runx) ? runx.tags : undefined;
  const list = Array.isArray(raw) ? raw : Array.isArray(frontmatter.tags) ? frontmatter.tags : [];
  return list.filter((t): t is string => typeof t === "string");
}

/** Builds the unsigned record for a package directory (relative to the workspace). Writes nothing. */
export async function buildUnsignedRecord(
  host: { workspaceRoot: string; now: () => Date },
  dir: string,
  options: {
    owner?: string;
    version?: string;
    trustTier?: TrustTier;
    publisher?: RegistryRecord["publisher"];
  },
): Promise<{ record: UnsignedRecord; entries: PackageEntry[] }> {
  const packageDir = path.resolve(host.workspaceRoot, dir);
  const resolved = await resolveSkillRef(packageDir, {
    workspaceRoot: host.workspaceRoot,
  });
  if (resolved.graphDocumentPath !== undefined) {
    throw new RuntimeError(
      "REGISTRY_INVALID",
      "only skill package directories are published, not standalone graph documents",
      { file: displayPath(host.workspaceRoot, packageDir) },
    );
  }
  const pkg = await loadSkillPackage(resolved);
  if (!isRegistrySlug(pkg.name)) {
    throw new RuntimeError(
      "REGISTRY_INVALID",
      `skill name '${pkg.name}' cannot be a registry name (lowercase letters, digits and -)`,
      { file: displayPath(host.workspaceRoot, resolved.skillMdPath), path: "name" },
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
  const profileText = profile === undefined ? null : Buffer.from(profile.content).toString("utf8");
  const declared = pkg.profile?.version;
  const packageDigest = digestPackageEntries(entries);
  const version = options.version ?? declared ?? `sha-${packageDigest.slice("sha256:".length, 19)}`;
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
    created_at: host.now().toISOString(),
  };
  // The stored text must reproduce the bytes the package digest was computed over.
  if (Buffer.from(markdown, "utf8").length !== skillMd.content.length) {
    throw new RuntimeError("REGISTRY_INVALID", "SKILL.md is not valid UTF-8");
  }
  return { record, entries };
}
