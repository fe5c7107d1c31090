/**
 * Adapter definitions on disk and their local trust records. Definitions
 * are checked into the project under `adapters/<id>.yaml` (or `.json`); trust is local state
 * in `.runx/adapters/trust.json`, never committed. The trusted digest covers the definition
 * bytes and the transitive closure of its repo-local payload files (scripts named in argv and
 * the relative modules they import), so editing any of them invalidates trust while changing
 * an unrelated adapter does not. There are no built-in adapters that skip trust.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { RuntimeError } from "../errors.js";
import { parseStrictYaml } from "../parser/strict-yaml.js";
import type { JsonValue } from "../parser/json.js";
import { hashCanonical, sha256Prefixed } from "../receipts/index.js";
import { DefinitionProblem, parseAdapterDefinition, ADAPTER_ID } from "./definition.js";
import type { AdapterDefinition } from "./definition.js";
import { hasSymlinkComponent, isInside } from "./fs-safety.js";
import { secondsTimestamp } from "../time.js";
import { ensureStateDir } from "../workspace.js";

/** Where definitions live, relative to the workspace root. */
export const ADAPTERS_DIR = "adapters";

/** A definition loaded from disk with its payload closure and digest. */
export interface LoadedAdapter {
  definition: AdapterDefinition;
  /** Workspace-relative path of the definition file. */
  file: string;
  /** Workspace-relative payload files, sorted. */
  payloadFiles: string[];
  /** sha256 over the definition bytes and every payload file. */
  digest: string;
  /** argv with repo-local payload paths made absolute (for launch only; never recorded). */
  launchArgv: string[];
}

/** A local trust record. */
export interface TrustRecord {
  id: string;
  definition_digest: string;
  payload_files: string[];
  executable_resolved: { basename: string; sha256: string | null };
  trusted_by: string;
  trusted_at: string;
}

/** Why loading failed, as a dispatch failure code. */
export class AdapterLoadProblem extends Error {
  constructor(
    readonly code: "unsupported_adapter" | "adapter_config_invalid" | "forbidden_executable",
    message: string,
  ) {
    super(message);
  }
}

const IMPORT_PATTERNS = [
  /\bimport\s+(?:[^'"()]*?\s+from\s+)?["']([^"']+)["']/g,
  /\bexport\s+[^'"()]*?\s+from\s+["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\brequire\(\s*["']([^"']+)["']\s*\)/g,
  /--(?:import|require|loader|experimental-loader)=(\S+)/g,
];

function relativeSpecifiers(source: string): string[] {
  const out: string[] = [];
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of source.matchAll(pattern)) {
      const spec = match[1];
      if (
        spec !== undefined &&
        (spec.startsWith("./") || spec.startsWith("../") || spec.startsWith("/"))
      )
        out.push(spec);
    }
  }
  return out;
}

/** Path of the definition file for `id`, or undefined when none exists. */
export function definitionPath(root: string, id: string): string | undefined {
  if (!ADAPTER_ID.test(id) || id.includes("..")) return undefined;
  for (const ext of ["yaml", "yml", "json"]) {
    const file = join(root, ADAPTERS_DIR, `${id}.${ext}`);
    if (existsSync(file)) return file;
  }
  return undefined;
}

function payloadClosure(
  root: string,
  defDir: string,
  argv: readonly string[],
): { files: string[]; launchArgv: string[] } {
  const files = new Set<string>();
  const queue: string[] = [];
  const admit = (abs: string, via: string): void => {
    if (!isInside(root, abs))
      throw new AdapterLoadProblem(
        "adapter_config_invalid",
        `payload ${via} lies outside the workspace`,
      );
    if (hasSymlinkComponent(root, abs))
      throw new AdapterLoadProblem(
        "adapter_config_invalid",
        `payload ${via} is reached through a symlink`,
      );
    if (!existsSync(abs))
      throw new AdapterLoadProblem("adapter_config_invalid", `payload ${via} does not exist`);
    const rel = relative(root, abs).split(sep).join("/");
    if (!files.has(rel)) {
      files.add(rel);
      queue.push(abs);
    }
  };
  // The command a wrapper launches (right after the first `--`) is named like argv[0]: an
  // absolute path there is an installed tool, a relative one a repo-local payload.
  const separator = argv.indexOf("--");
  const commandAt = (i: number): boolean => i === 0 || (separator > 0 && i === separator + 1);
  const launchArgv = argv.map((arg, i) => {
    const flag = /^--(?:import|require|loader|experimental-loader)=(.+)$/.exec(arg);
    const target = flag?.[1] ?? arg;
    const local =
      target.startsWith("./") || target.startsWith("../") || (commandAt(i) && target.includes("/"));
    if (!local && !target.startsWith("/")) return arg;
    if (target.startsWith("/")) {
      if (commandAt(i)) return arg; // an absolute executable outside the repo is an installed tool
      throw new AdapterLoadProblem(
        "adapter_config_invalid",
        `command.argv[${i}] is an absolute path; payloads are repo-relative`,
      );
    }
    const abs = resolve(defDir, target);
    admit(abs, `command.argv[${i}]`);
    return flag !== null ? arg.replace(target, abs) : abs;
  });
  while (queue.length > 0) {
    const file = queue.shift() ?? "";
    if (!/\.(mjs|cjs|js)$/.test(file)) continue;
    const source = readFileSync(file, "utf8");
    for (const spec of relativeSpecifiers(source)) {
      admit(resolve(dirname(file), spec), `${relative(root, file).split(sep).join("/")} → ${spec}`);
    }
  }
  return { files: [...files].sort(), launchArgv };
}

/** Loads and validates the definition of `id`, with its payload closure and digest. */
export function loadAdapter(root: string, id: string): LoadedAdapter {
  const file = definitionPath(root, id);
  if (file === undefined)
    throw new AdapterLoadProblem(
      "unsupported_adapter",
      `no adapter definition ${ADAPTERS_DIR}/${id}.yaml`,
    );
  const rel = relative(root, file).split(sep).join("/");
  if (hasSymlinkComponent(root, file))
    throw new AdapterLoadProblem("adapter_config_invalid", `${rel} is reached through a symlink`);
  const bytes = readFileSync(file);
  let doc: JsonValue;
  try {
    doc = file.endsWith(".json")
      ? (JSON.parse(bytes.toString("utf8")) as JsonValue)
      : parseStrictYaml(bytes.toString("utf8"), { file: rel }).value;
  } catch (error) {
    throw new AdapterLoadProblem(
      "adapter_config_invalid",
      `${rel}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let definition: AdapterDefinition;
  try {
    definition = parseAdapterDefinition(doc, id);
  } catch (error) {
    if (error instanceof DefinitionProblem)
      throw new AdapterLoadProblem(error.code, `${rel}: ${error.message}`);
    throw error;
  }
  const { files, launchArgv } = payloadClosure(root, dirname(file), definition.command.argv);
  const digest = hashCanonical({
    definition: sha256Prefixed(bytes),
    payload: files.map((path) => ({
      path,
      sha256: sha256Prefixed(readFileSync(join(root, path))),
    })),
  });
  return { definition, file: rel, payloadFiles: files, digest, launchArgv };
}

function trustFile(runxDir: string): string {
  return join(runxDir, "adapters", "trust.json");
}

/** Every local trust record, by adapter id. */
export function readTrust(runxDir: string): Record<string, TrustRecord> {
  const file = trustFile(runxDir);
  if (!existsSync(file)) return {};
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as {
      adapters?: Record<string, TrustRecord>;
    };
    return parsed.adapters ?? {};
  } catch {
    throw new RuntimeError(
      "CONFIG_INVALID",
      ".runx/adapters/trust.json is not valid JSON; re-trust the adapters",
      { path: ".runx/adapters/trust.json" },
    );
  }
}

/** Records trust in the current definition and payload of `id`; returns the record. */
export function trustAdapter(
  root: string,
  runxDir: string,
  id: string,
  principal: string,
  now: Date,
): TrustRecord {
  let loaded: LoadedAdapter;
  try {
    loaded = loadAdapter(root, id);
  } catch (error) {
    if (error instanceof AdapterLoadProblem)
      throw new RuntimeError("POLICY_DENIED", `cannot trust adapter ${id}: ${error.message}`, {
        adapter_id: id,
        failure_code: error.code,
      });
    throw error;
  }
  const first = loaded.definition.command.argv[0] ?? "";
  const repoExecutable = loaded.payloadFiles.find((f) => loaded.launchArgv[0]?.endsWith(f));
  const record: TrustRecord = {
    id,
    definition_digest: loaded.digest,
    payload_files: loaded.payloadFiles,
    executable_resolved: {
      basename: first.split("/").pop() ?? first,
      sha256:
        repoExecutable !== undefined
          ? sha256Prefixed(readFileSync(join(root, repoExecutable)))
          : null,
    },
    trusted_by: principal,
    trusted_at: secondsTimestamp(now),
  };
  const all = readTrust(runxDir);
  all[id] = record;
  const file = trustFile(runxDir);
  // The trust file is runx's own state: never written through a symlinked `.runx`.
  ensureStateDir(dirname(file));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(
    temp,
    `${JSON.stringify({ schema: "runx.adapter-trust.v1", adapters: all }, null, 2)}\n`,
    { mode: 0o600 },
  );
  renameSync(temp, file);
  return record;
}
