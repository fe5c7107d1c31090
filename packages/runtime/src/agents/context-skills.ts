/**
 * `context_skills`: each referenced SKILL.md is read, bounded and
 * digest-labelled, and handed to the agent as a `runx.skill.context` artifact in the
 * envelope's `current_context`. The content is untrusted advisory data, never instructions.
 *
 * Local refs are relative paths resolved against the graph (package) directory; they may use
 * `..` to reach sibling packages but never leave the package's parent directory, and that is
 * checked again after symlinks are resolved. Absolute paths are refused. Registry refs
 * (`registry:`, `runx-registry:`, `runx://skill/`) read the local registry record
 * `<registryDir>/<owner>/<name>/<version>.json` (`markdown` field, digest-checked) and need
 * an explicit version; without a registry directory they are refused.
 */
import { open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { RuntimeError } from "../errors.js";
import { readFileCapped } from "../packages/read-capped.js";
import { displayPath } from "../workspace.js";
import { isJsonObject } from "../parser/json.js";
import { parseSkillMarkdown } from "../parser/skill-markdown.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { SKILL_CONTEXT_TYPE } from "./request.js";
import type { SkillContextArtifact } from "./request.js";

/** At most this many context skills per agent act. */
export const CONTEXT_SKILLS_MAX_COUNT = 12;
/** At most this many bytes per context SKILL.md. */
export const CONTEXT_SKILL_MAX_BYTES = 64 * 1024;
/** At most this many bytes over all context skills of one act. */
export const CONTEXT_SKILLS_MAX_TOTAL_BYTES = 256 * 1024;
/** Registry records larger than this are refused before parsing. */
const REGISTRY_RECORD_MAX_BYTES = 4 * 1024 * 1024;

const REGISTRY_PREFIXES = ["registry:", "runx-registry:", "runx://skill/"] as const;
const SLUG = /^[a-z0-9][a-z0-9-]*$/;
const VERSION = /^[A-Za-z0-9._+-]{1,128}$/;

/** Where context skill refs are resolved. */
export interface ContextSkillOptions {
  /** The owning skill package directory; local refs may not leave its parent directory. */
  packageDir: string;
  /** The directory relative refs resolve against (the graph's directory); default packageDir. */
  baseDir?: string;
  /** The local registry root (RUNX_REGISTRY_DIR); registry refs are refused without it. */
  registryDir?: string;
  /** Error details name files relative to this directory when inside it. */
  workspaceRoot?: string;
}

interface ContextSource {
  ref: string;
  file: string;
  text: string;
  /** The exact bytes the digest is computed over. */
  raw: Uint8Array;
  /** Digest the source promises (registry records), checked against the content. */
  expectedDigest?: string;
}

function invalid(message: string, ref: string, extra: Record<string, unknown> = {}): never {
  throw new RuntimeError("CONTEXT_SKILL_INVALID", message, { ref, ...extra });
}

function inside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function decodeUtf8(bytes: Uint8Array, ref: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return invalid("context skill SKILL.md is not valid UTF-8", ref);
  }
}

function tooLarge(ref: string): never {
  throw new RuntimeError(
    "CONTEXT_SKILLS_LIMIT",
    `context skill exceeds ${CONTEXT_SKILL_MAX_BYTES / 1024} KiB`,
    { ref, limit_bytes: CONTEXT_SKILL_MAX_BYTES },
  );
}

/** Reads at most the per-skill limit; a larger file is refused, never truncated. */
async function readBounded(file: string, ref: string): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    if ((await handle.stat()).size > CONTEXT_SKILL_MAX_BYTES) tooLarge(ref);
    const buffer = Buffer.alloc(CONTEXT_SKILL_MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > CONTEXT_SKILL_MAX_BYTES) tooLarge(ref);
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

async function readLocal(ref: string, options: ContextSkillOptions): Promise<ContextSource> {
  const shown = (file: string): string =>
    options.workspaceRoot === undefined ? file : displayPath(options.workspaceRoot, file);
  if (ref.trim() === "") invalid("context skill ref is empty", ref);
  if (path.isAbsolute(ref) || /^[A-Za-z]:[\\/]/.test(ref)) {
    throw new RuntimeError("PATH_ESCAPE", "context skill refs must be relative paths", { ref });
  }
  const packageDir = path.resolve(options.packageDir);
  const root = path.dirname(packageDir);
  const target = path.resolve(options.baseDir ?? packageDir, ref);
  const escape = (): never => {
    throw new RuntimeError(
      "PATH_ESCAPE",
      "context skill ref escapes the package's parent directory",
      { ref },
    );
  };
  if (!inside(root, target)) escape();
  const found = await stat(target).catch(() => undefined);
  if (found === undefined) {
    throw new RuntimeError("PACKAGE_NOT_FOUND", "context skill not found", {
      ref,
      file: shown(target),
    });
  }
  let skillFile: string;
  if (found.isDirectory()) skillFile = path.join(target, "SKILL.md");
  else if (found.isFile() && path.basename(target) === "SKILL.md") skillFile = target;
  else return invalid("a context skill ref names a package directory or its SKILL.md", ref);
  const [realRoot, realFile] = await Promise.all([
    realpath(root),
    realpath(skillFile).catch(() => undefined),
  ]);
  if (realFile === undefined) {
    throw new RuntimeError("PACKAGE_NOT_FOUND", "context skill has no SKILL.md", {
      ref,
      file: shown(skillFile),
    });
  }
  if (!inside(realRoot, realFile)) escape();
  const bytes = await readBounded(realFile, ref);
  return { ref, file: shown(skillFile), text: decodeUtf8(bytes, ref), raw: bytes };
}

function registryPath(ref: string): string | undefined {
  for (const prefix of REGISTRY_PREFIXES) {
    if (ref.startsWith(prefix)) return ref.slice(prefix.length);
  }
  return undefined;
}

async function readRegistry(
  ref: string,
  spec: string,
  options: ContextSkillOptions,
): Promise<ContextSource> {
  if (options.registryDir === undefined) {
    return invalid("registry context skills need RUNX_REGISTRY_DIR", ref);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(spec);
  } catch {
    return invalid("registry context skill ref is malformed", ref);
  }
  const match = /^([^/@]+)\/([^/@]+)(?:@(.+))?$/.exec(decoded);
  const [, owner, name, version] = match ?? [];
  if (owner === undefined || name === undefined || !SLUG.test(owner) || !SLUG.test(name)) {
    return invalid("registry context skill refs read owner/name@version", ref);
  }
  if (version === undefined) {
    return invalid("registry context skill refs need an explicit @version", ref);
  }
  if (!VERSION.test(version) || version === "." || version === "..") {
    return invalid("registry context skill version is malformed", ref);
  }
  const file = path.join(options.registryDir, encodeURIComponent(owner), name, `${version}.json`);
  // Capped on the descriptor: a huge, growing or non-regular record is refused unread.
  const capped = {
    path: file,
    shown: ref,
    what: "registry record",
    maxBytes: REGISTRY_RECORD_MAX_BYTES,
  };
  const raw = await readFileCapped(capped).catch((error: unknown) => {
    if (error instanceof RuntimeError && error.code === "FILE_TOO_LARGE")
      invalid("registry record is too large", ref);
    return undefined;
  });
  if (raw === undefined) {
    throw new RuntimeError("PACKAGE_NOT_FOUND", "context skill is not in the local registry", {
      ref,
    });
  }
  let record: unknown;
  try {
    record = JSON.parse(decodeUtf8(raw, ref));
  } catch {
    return invalid("registry record is not valid JSON", ref);
  }
  if (!isJsonObject(record) || typeof record.markdown !== "string") {
    return invalid("registry record has no SKILL.md markdown", ref);
  }
  const text = record.markdown;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > CONTEXT_SKILL_MAX_BYTES) tooLarge(ref);
  const source: ContextSource = { ref, file: `${owner}/${name}@${version}`, text, raw: bytes };
  if (typeof record.digest === "string") {
    const recorded = record.digest.toLowerCase();
    source.expectedDigest = recorded.startsWith("sha256:") ? recorded : `sha256:${recorded}`;
  }
  return source;
}

/**
 * Resolves and reads the context skills of one agent act, in ref order. Refuses more than
 * 12 refs, a SKILL.md over 64 KiB, or more than 256 KiB in total (CONTEXT_SKILLS_LIMIT);
 * escaping refs are PATH_ESCAPE; unreadable or malformed ones CONTEXT_SKILL_INVALID.
 */
export async function resolveContextSkills(
  refs: readonly string[],
  options: ContextSkillOptions,
): Promise<SkillContextArtifact[]> {
  if (refs.length > CONTEXT_SKILLS_MAX_COUNT) {
    throw new RuntimeError(
      "CONTEXT_SKILLS_LIMIT",
      `at most ${CONTEXT_SKILLS_MAX_COUNT} context skills may be referenced`,
      { count: refs.length, limit: CONTEXT_SKILLS_MAX_COUNT },
    );
  }
  const artifacts: SkillContextArtifact[] = [];
  let total = 0;
  for (const ref of refs) {
    const spec = registryPath(ref);
    const source =
      spec === undefined ? await readLocal(ref, options) : await readRegistry(ref, spec, options);
    total += source.raw.length;
    if (total > CONTEXT_SKILLS_MAX_TOTAL_BYTES) {
      throw new RuntimeError(
        "CONTEXT_SKILLS_LIMIT",
        `context skills exceed ${CONTEXT_SKILLS_MAX_TOTAL_BYTES / 1024} KiB in total`,
        { ref, limit_bytes: CONTEXT_SKILLS_MAX_TOTAL_BYTES },
      );
    }
    const digest = sha256Prefixed(source.raw);
    if (source.expectedDigest !== undefined && source.expectedDigest !== digest) {
      invalid("registry context skill does not match its recorded digest", ref);
    }
    const skill = parseSkillMarkdown(source.text, { file: source.file });
    artifacts.push({
      type: SKILL_CONTEXT_TYPE,
      label: skill.name,
      ref,
      digest,
      bytes: source.raw.length,
      content: source.text,
      trust: "untrusted",
    });
  }
  return artifacts;
}
