/**
 * The two digests `runx tool build` reports for a local tool (upstream's definitions, so the
 * values agree with upstream for the same files):
 *
 * - `source_hash`: SHA-256 over the tool's source closure — the local files named by
 *   `source.command`, `source.args`, `source.module`, `source.server.{command,args}` (relative
 *   paths below the tool directory that exist as files) plus, transitively, the relative
 *   imports of JavaScript files among them. Files are taken in path order; each contributes
 *   `<path relative to the tool directory> NUL <bytes> NUL`. No files: the bytes `no-source`.
 * - `schema_hash`: SHA-256 of the compact JSON `{"inputs":{…},"artifacts":{…}}` with inputs in
 *   key order, each input's fields in the order type, required, description, default, artifact,
 *   packet, schema, and `artifacts` (when declared) as wrap_as, packet, then its other keys in
 *   key order. Nested JSON values (defaults, schemas) are written with sorted keys.
 *
 * Import discovery is lexical (static `import`/`export … from`, `import()`, `require()` with a
 * string literal, after dropping comments); a relative import that resolves to no file is an
 * error, as upstream.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, relative, sep } from "node:path";
import { sha256Prefixed } from "../receipts/canonical.js";
import type { Json } from "../tools/types.js";
import type { ToolManifest } from "./manifest.js";

/** A problem with the tool's source files, phrased for the build report. */
export class ToolSourceError extends Error {}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A manifest token naming a file inside the tool directory, or undefined. */
function localSourcePath(toolDir: string, candidate: string): string | undefined {
  if (candidate === "" || isAbsolute(candidate)) return undefined;
  const parts = candidate.split(/[\\/]/);
  if (parts.some((p) => p === "..")) return undefined;
  const resolved = join(toolDir, candidate);
  return isFile(resolved) ? resolved : undefined;
}

function entrypoints(toolDir: string, manifest: ToolManifest): string[] {
  const s = manifest.source;
  const candidates = [
    ...(s.command !== undefined ? [s.command] : []),
    ...(s.args ?? []),
    ...(s.module !== undefined ? [s.module] : []),
    ...(s.server !== undefined ? [s.server.command, ...(s.server.args ?? [])] : []),
  ];
  return candidates.flatMap((c) => localSourcePath(toolDir, c) ?? []);
}

const JS_EXTENSIONS = new Set([".js", ".mjs", ".cjs"]);
const TS_EXTENSIONS = new Set([".ts", ".tsx", ".mts", ".cts"]);
const IMPORT_CANDIDATE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs"];

/** Relative module specifiers a JavaScript source imports (lexical scan). */
export function relativeImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/(^|[^:\\])\/\/.*$/gm, "$1");
  const patterns = [
    /\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"'\n]+)["']/g,
    /\bexport\s*(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*["']([^"'\n]+)["']/g,
    /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
  ];
  const found: string[] = [];
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[1] ?? "";
      if (specifier.startsWith("./") || specifier.startsWith("../")) found.push(specifier);
    }
  }
  return found;
}

function resolveImport(fromFile: string, specifier: string): string | undefined {
  const clean = specifier.split(/[?#]/)[0] || specifier;
  const base = join(dirname(fromFile), clean);
  const candidates =
    extname(base) === ""
      ? [
          ...IMPORT_CANDIDATE_EXTENSIONS.map((e) => `${base}${e}`),
          ...IMPORT_CANDIDATE_EXTENSIONS.map((e) => join(base, `index${e}`)),
        ]
      : [base];
  const hit = candidates.find((c) => existsSync(c));
  return hit === undefined ? undefined : realpathSync(hit);
}

/** Component-wise path order (what upstream's ordered path set uses). */
function comparePaths(a: string, b: string): number {
  const left = a.split(sep);
  const right = b.split(sep);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const l = left[i] as string;
    const r = right[i] as string;
    if (l !== r) return Buffer.compare(Buffer.from(l), Buffer.from(r));
  }
  return left.length - right.length;
}

/** The tool's source files (canonical paths, in path order). */
export function sourceClosure(toolDir: string, manifest: ToolManifest): string[] {
  const pending = entrypoints(toolDir, manifest);
  const seen = new Set<string>();
  while (pending.length > 0) {
    const next = pending.shift() as string;
    if (!existsSync(next)) continue;
    const file = realpathSync(next);
    if (seen.has(file)) continue;
    seen.add(file);
    if (!JS_EXTENSIONS.has(extname(file))) continue;
    for (const specifier of relativeImports(readFileSync(file, "utf8"))) {
      const dependency = resolveImport(file, specifier);
      if (dependency === undefined) {
        throw new ToolSourceError(
          `${relative(toolDir, file).split(sep).join("/")} imports ${JSON.stringify(specifier)}, which does not resolve to a local source file.`,
        );
      }
      pending.push(dependency);
    }
  }
  const files = [...seen].sort(comparePaths);
  const command = manifest.source.command;
  if (command !== undefined && basename(command, extname(command)).toLowerCase() === "node") {
    const ts = files.find((f) => TS_EXTENSIONS.has(extname(f)));
    if (ts !== undefined) {
      throw new ToolSourceError(
        `${relative(toolDir, ts).split(sep).join("/")} is uncompiled TypeScript; declare an executable JavaScript entrypoint.`,
      );
    }
  }
  return files;
}

/** `source_hash` of a tool (see the module comment). */
export function sourceHash(toolDir: string, manifest: ToolManifest): string {
  const root = existsSync(toolDir) ? realpathSync(toolDir) : toolDir;
  const files = sourceClosure(toolDir, manifest);
  if (files.length === 0) return sha256Prefixed("no-source");
  const chunks: Buffer[] = [];
  const nul = Buffer.from([0]);
  for (const file of files) {
    const rel = relative(root, file);
    const label = rel === "" ? "." : isAbsolute(rel) ? file : rel.split(sep).join("/");
    chunks.push(Buffer.from(label, "utf8"), nul, readFileSync(file), nul);
  }
  return sha256Prefixed(Buffer.concat(chunks));
}

function sortedJson(value: Json | undefined): Json | undefined {
  if (value === undefined || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => sortedJson(v) as Json);
  const out: Record<string, Json> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedJson(value[key]) as Json;
  return out;
}

/** `schema_hash` of a tool (see the module comment). */
export function schemaHash(manifest: ToolManifest): string {
  const inputs: Record<string, Record<string, Json | undefined>> = {};
  for (const name of Object.keys(manifest.inputs).sort()) {
    const input = manifest.inputs[name];
    if (input === undefined) continue;
    inputs[name] = {
      type: input.type,
      required: input.required,
      description: input.description,
      default: sortedJson(input.default),
      artifact: sortedJson(input.artifact),
      packet: input.packet,
      schema: sortedJson(input.schema),
    };
  }
  const material: Record<string, unknown> = { inputs };
  const artifacts = manifest.artifacts;
  if (artifacts !== undefined) {
    const ordered: Record<string, Json | undefined> = {
      wrap_as: artifacts.wrap_as,
      packet: artifacts.packet,
    };
    for (const key of Object.keys(artifacts).sort()) {
      if (key !== "wrap_as" && key !== "packet") ordered[key] = sortedJson(artifacts[key]);
    }
    material.artifacts = ordered;
  }
  // JSON.stringify drops undefined fields, which is how absent optional fields are skipped.
  return sha256Prefixed(JSON.stringify(material));
}
