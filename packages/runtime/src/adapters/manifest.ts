/**
 * Collection: the adapter's `adapter-output-manifest.json` in its output
 * directory is the only channel for status, artifacts and questions; stdout is never parsed.
 * Every reported path must stay a plain relative path inside the output directory with no
 * symlink on the way, exist as a regular file within the limits and match its digest.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { validateAdaptersAdapterOutputManifest } from "../generated/validate-adapters-adapter-output-manifest.js";
import { sha256Prefixed } from "../receipts/index.js";
import type { AdapterLimits } from "./definition.js";
import { checkContained, isInside, isPlainRelative } from "./fs-safety.js";
import type { FailureCode } from "./vocabulary.js";

/** The manifest file name inside the output directory. */
export const MANIFEST_FILE = "adapter-output-manifest.json";

/** `adapter-output-manifest.v1` as the adapter writes it. */
export interface OutputManifest {
  schema: "adapter-output-manifest.v1";
  packet_id: string;
  run_id: string;
  adapter_id: string;
  status: "completed" | "needs_input" | "blocked" | "failed";
  summary?: string;
  artifacts?: Array<{
    role: string;
    path: string;
    sha256: string;
    bytes: number;
    media_type?: string;
  }>;
  questions?: Array<{ question_id: string; prompt: string; answer_schema?: unknown }>;
  blocker?: { code: string; message: string };
  failure?: { code: string; message: string };
  changed_files?: string[];
  verification_claims?: Array<{ command: string; result: string }>;
  authority_used?: string[];
  runtime?: { name: string; version?: string };
}

/** A validated artifact, as recorded. */
export interface ArtifactRecord {
  role: string;
  path: string;
  sha256: string;
  bytes: number;
}

/** The result of collecting an output directory. */
export type Collection =
  | {
      ok: true;
      manifest: OutputManifest;
      manifestSha256: string;
      artifacts: ArtifactRecord[];
      undeclared: string[];
    }
  | {
      ok: false;
      code: FailureCode;
      message: string;
      manifest?: OutputManifest;
      manifestSha256?: string;
      undeclared: string[];
    };

function listFiles(dir: string, base = dir): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) return listFiles(abs, base);
    return [relative(base, abs).split(sep).join("/")];
  });
}

/** Validates the manifest and every artifact it declares. */
export function collectOutputs(opts: {
  outDir: string;
  packetId: string;
  runId: string;
  limits: AdapterLimits;
}): Collection {
  const { outDir, limits } = opts;
  const all = listFiles(outDir);
  const undeclaredOf = (declared: ReadonlySet<string>): string[] =>
    all.filter((f) => f !== MANIFEST_FILE && !declared.has(f)).sort();
  const manifestPath = join(outDir, MANIFEST_FILE);
  let stat;
  try {
    stat = lstatSync(manifestPath);
  } catch {
    return {
      ok: false,
      code: "manifest_missing",
      message: `the adapter wrote no ${MANIFEST_FILE}`,
      undeclared: undeclaredOf(new Set()),
    };
  }
  if (stat.isSymbolicLink() || !stat.isFile()) {
    return {
      ok: false,
      code: "manifest_invalid",
      message: `${MANIFEST_FILE} is not a regular file`,
      undeclared: undeclaredOf(new Set()),
    };
  }
  if (stat.size > limits.max_manifest_bytes) {
    return {
      ok: false,
      code: "manifest_invalid",
      message: `${MANIFEST_FILE} is ${stat.size} bytes; the limit is ${limits.max_manifest_bytes}`,
      undeclared: undeclaredOf(new Set()),
    };
  }
  const bytes = readFileSync(manifestPath);
  const manifestSha256 = sha256Prefixed(bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    return {
      ok: false,
      code: "manifest_invalid",
      message: `${MANIFEST_FILE} is not valid JSON`,
      manifestSha256,
      undeclared: undeclaredOf(new Set()),
    };
  }
  if (!validateAdaptersAdapterOutputManifest(parsed)) {
    const first = validateAdaptersAdapterOutputManifest.errors?.[0];
    return {
      ok: false,
      code: "manifest_invalid",
      message: `${MANIFEST_FILE} breaks its schema at ${first?.instancePath || "/"}: ${first?.message ?? "invalid"}`,
      manifestSha256,
      undeclared: undeclaredOf(new Set()),
    };
  }
  const manifest = parsed as OutputManifest;
  const fail = (code: FailureCode, message: string, declared: ReadonlySet<string>): Collection => ({
    ok: false,
    code,
    message,
    manifest,
    manifestSha256,
    undeclared: undeclaredOf(declared),
  });
  if (manifest.packet_id !== opts.packetId || manifest.run_id !== opts.runId) {
    return fail("manifest_run_mismatch", "the manifest names a different packet or run", new Set());
  }
  const declared = manifest.artifacts ?? [];
  const names = new Set(declared.map((a) => a.path));
  if (declared.length > limits.max_artifacts) {
    return fail(
      "artifact_too_large",
      `the manifest declares ${declared.length} artifacts; the limit is ${limits.max_artifacts}`,
      names,
    );
  }
  const realOut = realpathSync(outDir);
  const artifacts: ArtifactRecord[] = [];
  let total = 0;
  for (const artifact of declared) {
    const shown = JSON.stringify(artifact.path.slice(0, 200));
    if (!isPlainRelative(artifact.path)) {
      return fail(
        "artifact_outside_safe_roots",
        `artifact path ${shown} is not a plain relative path inside the output directory`,
        names,
      );
    }
    const problem = checkContained(outDir, artifact.path, { file: true });
    if (problem === "symlink")
      return fail("artifact_symlink", `artifact path ${shown} passes through a symlink`, names);
    if (problem === "missing" || problem === "not_file")
      return fail(
        "artifact_missing",
        `artifact ${shown} is not a regular file in the output directory`,
        names,
      );
    if (problem === "outside")
      return fail(
        "artifact_outside_safe_roots",
        `artifact path ${shown} leaves the output directory`,
        names,
      );
    const abs = join(outDir, artifact.path);
    if (!isInside(realOut, realpathSync(abs)))
      return fail(
        "artifact_outside_safe_roots",
        `artifact ${shown} resolves outside the output directory`,
        names,
      );
    const size = lstatSync(abs).size;
    total += size;
    if (size > limits.max_artifact_bytes || total > limits.max_total_artifact_bytes) {
      return fail(
        "artifact_too_large",
        `artifact ${shown} exceeds the artifact size limits`,
        names,
      );
    }
    const digest = sha256Prefixed(readFileSync(abs));
    if (digest !== artifact.sha256 || size !== artifact.bytes) {
      return fail(
        "artifact_digest_mismatch",
        `artifact ${shown} does not match its declared digest and size`,
        names,
      );
    }
    artifacts.push({ role: artifact.role, path: artifact.path, sha256: digest, bytes: size });
  }
  return { ok: true, manifest, manifestSha256, artifacts, undeclared: undeclaredOf(names) };
}
