/**
 * Local process tools as callable tools: a valid `<root>/<ns>/<tool>/manifest.json` under a
 * RUNX_TOOL_ROOTS directory or the workspace's `tools/` becomes a `NativeTool`, so graph steps
 * (`tool: ns.tool`) and managed agents' `allowed_tools` reach it through the same admission as
 * the native tools: the manifest's inputs are the input contract, its scopes must be granted,
 * and `mutating` with `idempotency.key` feed the graph's retry/idempotency rules. A `cli-tool` source runs through the
 * cli-tool runner (process supervision, deny-by-default environment, cwd containment) with the
 * tool directory as its working directory and its inputs as `RUNX_INPUT_<NAME>` and
 * `RUNX_INPUTS_JSON`; a JSON object on stdout is the tool's output, wrapped as the manifest's
 * `artifacts.wrap_as` says.
 *
 * Lookup order is the one `runx tool inspect` uses (each tool root, then `tools/`), so what
 * inspect shows is what a step runs. A tool directory that resolves (through symlinks) outside
 * the root it was found under is refused, as is a manifest that does not validate: the error
 * names the manifest file and the field.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Ajv } from "ajv";
import { RuntimeError } from "../errors.js";
import { packageArtifacts } from "../graph/artifacts.js";
import type { JsonObject } from "../parser/json.js";
import {
  inputsJsonSchema,
  valueMatchesType,
  type InputDeclaration,
  type InputType,
} from "../parser/input-declarations.js";
import { runCliTool } from "../runners/cli-tool.js";
import { inputValidator } from "../tools/ajv-input.js";
import { failureResult } from "../tools/define-tool.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../tools/types.js";
import { readManifest, type ToolManifest } from "./manifest.js";
import type { CatalogSource, CatalogTool } from "./sources.js";

/** Where local tools live: the workspace and RUNX_TOOL_ROOTS (relative to the workspace). */
export interface LocalToolRoots {
  workspaceRoot: string;
  toolRoots: readonly string[];
  /**
   * The package directory of the skill being run, when there is one. Its tools are found
   * beside it as upstream runx infers them: the package's own `tools/`, and, for a package in
   * a `skills/` folder, that folder's sibling `tools/` — so a package keeps its tools when it
   * runs outside the workspace it was written in (a harness scratch copy, an install).
   */
  skillDir?: string;
}

const TOOL_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;
const INPUT_TYPES: ReadonlySet<string> = new Set<InputType>([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "json",
]);

/** The source id local tools carry in `runx tool search`. */
export const LOCAL_SOURCE = "local";

/**
 * The roots searched, in order: each RUNX_TOOL_ROOTS entry, the running package's inferred
 * roots (`inferredToolRoots`), then the workspace's `tools/`; each root once.
 */
export function localToolRootDirs(roots: LocalToolRoots): string[] {
  const all = [
    ...roots.toolRoots.map((r) => resolve(roots.workspaceRoot, r)),
    ...(roots.skillDir === undefined ? [] : inferredToolRoots(roots.skillDir).map((r) => r.root)),
    join(roots.workspaceRoot, "tools"),
  ];
  return [...new Set(all)];
}

/** The inferred tool roots of a package directory that exist (absolute paths). */
export function packageToolRoots(skillDir: string): string[] {
  return inferredToolRoots(skillDir)
    .map((r) => r.root)
    .filter((root) => {
      try {
        return statSync(root).isDirectory();
      } catch {
        return false;
      }
    });
}

/** A tool root inferred from a package directory and the directory it must stay inside. */
interface InferredRoot {
  root: string;
  base: string;
}

/** `<package>/tools`, and `<dir>/tools` for a package at `<dir>/skills/<name>`. */
function inferredToolRoots(skillDir: string): InferredRoot[] {
  const dir = resolve(skillDir);
  const out: InferredRoot[] = [{ root: join(dir, "tools"), base: dir }];
  const parent = dirname(dir);
  if (basename(parent) === "skills") {
    const base = dirname(parent);
    out.push({ root: join(base, "tools"), base });
  }
  return out;
}

/** RUNX_TOOL_ROOTS as a list (the platform's path delimiter separates entries). */
export function parseToolRoots(value: string | undefined, delimiter: string): string[] {
  return (value ?? "").split(delimiter).filter((r) => r !== "");
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A manifest path as errors show it: workspace-relative with `/`, else absolute. */
function shownPath(workspaceRoot: string, path: string): string {
  const rel = relative(workspaceRoot, path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel.split(sep).join("/");
}

/** One located local tool: its root, directory and manifest path. */
interface LocatedTool {
  root: string;
  dir: string;
  manifestPath: string;
}

/** The first root holding `<ns>/<tool>/manifest.json` for a dotted name, or undefined. */
function locate(name: string, roots: LocalToolRoots): LocatedTool | undefined {
  if (!TOOL_NAME.test(name)) return undefined;
  const dot = name.indexOf(".");
  for (const root of localToolRootDirs(roots)) {
    const dir = join(root, name.slice(0, dot), name.slice(dot + 1));
    const manifestPath = join(dir, "manifest.json");
    if (isFile(manifestPath)) return { root, dir, manifestPath };
  }
  return undefined;
}

/** The workspace-shown manifest path a dotted name resolves to locally, or undefined. */
export function localManifestFor(name: string, roots: LocalToolRoots): string | undefined {
  const found = locate(name, roots);
  return found === undefined ? undefined : shownPath(roots.workspaceRoot, found.manifestPath);
}

/**
 * The tool directory after symlinks, refused (PATH_ESCAPE) when it leaves the root it was
 * found under, or when that root itself is a workspace `tools/` reached through a link out.
 */
function containedDir(found: LocatedTool, roots: LocalToolRoots): string {
  const shown = shownPath(roots.workspaceRoot, found.manifestPath);
  const rootReal = realpathSync(found.root);
  const dirReal = realpathSync(found.dir);
  const manifestReal = realpathSync(found.manifestPath);
  // A root the runtime found by itself (the workspace's or a package's `tools/`) must not be a
  // link out of the directory it was found in; RUNX_TOOL_ROOTS entries are the invoker's.
  const bases = [
    { root: join(roots.workspaceRoot, "tools"), base: roots.workspaceRoot },
    ...(roots.skillDir === undefined ? [] : inferredToolRoots(roots.skillDir)),
  ];
  const foundBase = bases.find((b) => b.root === found.root);
  const escapes =
    !isInside(dirReal, rootReal) ||
    !isInside(manifestReal, dirReal) ||
    (foundBase !== undefined && !isInside(rootReal, realpathSync(foundBase.base)));
  if (escapes) {
    throw new RuntimeError(
      "PATH_ESCAPE",
      `${shown}: the tool directory resolves outside its tool root (a symlink out of the workspace or RUNX_TOOL_ROOTS is refused)`,
      { manifest: shown },
    );
  }
  return dirReal;
}

function manifestInvalid(shown: string, problem: string): RuntimeError {
  const field = /^([A-Za-z0-9_.[\]-]+) /.exec(problem)?.[1];
  return new RuntimeError("TOOL_MANIFEST_INVALID", `${shown}: ${problem}`, {
    manifest: shown,
    ...(field !== undefined && field !== "manifest.json" ? { field } : {}),
  });
}

function declarations(manifest: ToolManifest, shown: string): Record<string, InputDeclaration> {
  const out: Record<string, InputDeclaration> = {};
  for (const [name, input] of Object.entries(manifest.inputs)) {
    if (!INPUT_TYPES.has(input.type)) {
      throw manifestInvalid(
        shown,
        `inputs.${name}.type must be one of: ${[...INPUT_TYPES].join(", ")}.`,
      );
    }
    const type = input.type as InputType;
    if (input.default !== undefined && !valueMatchesType(input.default, type)) {
      throw manifestInvalid(shown, `inputs.${name}.default is not a ${type}.`);
    }
    out[name] = {
      name,
      type,
      required: input.required,
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.default !== undefined ? { default: input.default } : {}),
      ...(input.schema !== undefined ? { schema: input.schema } : {}),
    };
  }
  return out;
}

/** The keys a tool's output exposes: `artifacts.wrap_as`, else the declared output's properties. */
function outputSchemaOf(manifest: ToolManifest): JsonRecord {
  const wrapAs = manifest.artifacts?.wrap_as;
  if (typeof wrapAs === "string" && wrapAs !== "") {
    return { type: "object", properties: { [wrapAs]: { type: "object" } } };
  }
  const output = (manifest as { output?: JsonRecord }).output;
  const props = output?.properties;
  if (props !== null && typeof props === "object" && !Array.isArray(props)) {
    return { type: "object", properties: props };
  }
  return { type: "object" };
}

function withDefaults(
  input: JsonRecord,
  decls: Readonly<Record<string, InputDeclaration>>,
): JsonRecord {
  const out: JsonRecord = { ...input };
  for (const [name, decl] of Object.entries(decls)) {
    if (out[name] === undefined && decl.default !== undefined) out[name] = decl.default;
  }
  return out;
}

async function runManifest(
  manifest: ToolManifest,
  dir: string,
  input: JsonRecord,
  ctx: ToolContext,
): Promise<ToolResult> {
  const s = manifest.source;
  const result = await runCliTool({
    spec: {
      command: s.command ?? "",
      ...(s.args !== undefined ? { args: s.args } : {}),
      ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
      ...(s.input_mode !== undefined ? { input_mode: s.input_mode } : {}),
      ...(s.timeout_seconds !== undefined ? { timeout_seconds: s.timeout_seconds } : {}),
      // A declared output contract means stdout must be one JSON object.
      ...((manifest as { output?: unknown }).output !== undefined
        ? { outputs: (manifest as { output?: unknown }).output }
        : {}),
    },
    packageDir: dir,
    workspaceRoot: ctx.workspaceRoot,
    inputs: input,
    baseEnv: ctx.baseEnv,
    policy: ctx.policy ?? { strictInlineCode: false },
    stateRoots: ctx.stateRoots,
    signal: ctx.signal,
  });
  if (result.disposition !== "closed") {
    const code = result.disposition === "timed_out" ? "TIMEOUT" : "PROCESS_FAILED";
    return {
      status: "failure",
      code,
      summary: `${manifest.name}: ${result.summary ?? result.disposition}`,
      output: { code, exit_code: result.exitCode },
    };
  }
  const output = packageArtifacts(result.output as JsonObject, manifest.artifacts);
  return { status: "success", output, summary: `${manifest.name} exited 0` };
}

/**
 * The local tool named `name`, or undefined when no root holds it. Throws PATH_ESCAPE for a
 * tool directory that leaves its root and TOOL_MANIFEST_INVALID (file and field named) for a
 * manifest that does not validate or names another tool.
 */
export function loadLocalTool(name: string, roots: LocalToolRoots): NativeTool | undefined {
  const found = locate(name, roots);
  if (found === undefined) return undefined;
  const shown = shownPath(roots.workspaceRoot, found.manifestPath);
  const dir = containedDir(found, roots);
  const read = readManifest(found.manifestPath);
  if (!read.ok) throw manifestInvalid(shown, read.problem);
  const manifest = read.manifest;
  if (manifest.name !== name) {
    throw manifestInvalid(
      shown,
      `name is ${JSON.stringify(manifest.name)}, but the manifest sits where ${JSON.stringify(name)} belongs.`,
    );
  }
  if (manifest.source.type !== "cli-tool") {
    throw manifestInvalid(
      shown,
      `source.type ${manifest.source.type} is not runnable as a local tool here (only cli-tool is).`,
    );
  }
  const decls = declarations(manifest, shown);
  const inputSchema = inputsJsonSchema(decls);
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false, logger: false });
  let validate;
  try {
    validate = ajv.compile(inputSchema);
  } catch {
    throw manifestInvalid(shown, "inputs.schema is not valid JSON Schema.");
  }
  const validateInput = inputValidator(validate, inputSchema);
  const idempotency = (manifest as { idempotency?: JsonRecord }).idempotency;
  const key = idempotency?.key;
  if (key !== undefined && (typeof key !== "string" || key === "")) {
    throw manifestInvalid(shown, "idempotency.key must be a non-empty string.");
  }
  const idempotencyKey = typeof key === "string" ? key : undefined;
  return {
    name: manifest.name,
    description: manifest.description ?? `local tool ${manifest.name}`,
    mutating: manifest.mutating === true,
    scopes: [...manifest.scopes],
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    inputSchema,
    outputSchema: outputSchemaOf(manifest),
    validateInput,
    async execute(input, ctx) {
      const check = validateInput(input);
      if (!check.ok) {
        const at = check.path === "" ? "" : `${check.path}: `;
        return failureResult(
          new RuntimeError("INPUT_INVALID", `${manifest.name}: ${at}${check.message}`, {
            path: check.path,
          }),
        );
      }
      try {
        return await runManifest(manifest, dir, withDefaults(input, decls), ctx);
      } catch (error) {
        return failureResult(error);
      }
    },
  };
}

function directories(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * The local tools as a catalog source for `runx tool search`: every valid manifest under the
 * roots (the first root holding a name wins, as in lookup). Invalid manifests are left out of
 * search; `runx tool build` and a step calling them report the problem.
 */
export function localCatalogSource(roots: LocalToolRoots): CatalogSource {
  return {
    id: LOCAL_SOURCE,
    label: "Local tools",
    type: "local",
    tools: () => {
      const seen = new Set<string>();
      const out: CatalogTool[] = [];
      for (const root of localToolRootDirs(roots)) {
        for (const ns of directories(root)) {
          for (const tool of directories(join(root, ns))) {
            const manifestPath = join(root, ns, tool, "manifest.json");
            const name = `${ns}.${tool}`;
            if (seen.has(name) || !isFile(manifestPath)) continue;
            const read = readManifest(manifestPath);
            if (!read.ok || read.manifest.name !== name) continue;
            seen.add(name);
            const m = read.manifest;
            out.push({
              name,
              ...(m.description !== undefined ? { summary: m.description } : {}),
              namespace: ns,
              external_name: tool,
              required_scopes: [...m.scopes],
              tags: ["local", m.source.type, ns],
              inputs: m.inputs,
            });
          }
        }
      }
      return out;
    },
  };
}
