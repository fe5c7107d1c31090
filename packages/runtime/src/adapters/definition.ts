/**
 * Adapter definitions (`adapter.v1`): the reviewed, checked-in description
 * of how one external agent runtime is launched. Pure: a parsed document in, a validated
 * definition or a refusal (`adapter_config_invalid`, `forbidden_executable`) out. Unknown
 * fields are rejected; every limit has a default and a hard maximum.
 */
import { detectInlineCode } from "../policy/inline-code.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { parseToolVersion } from "./version.js";
import { isAuthorityWord } from "./vocabulary.js";
import type { FailureCode } from "./vocabulary.js";

/** Effective limits of a dispatch. */
export interface AdapterLimits {
  timeout_ms: number;
  grace_ms: number;
  max_stdout_bytes: number;
  max_stderr_bytes: number;
  hard_output_bytes: number;
  max_manifest_bytes: number;
  max_artifacts: number;
  max_artifact_bytes: number;
  max_total_artifact_bytes: number;
}

const KIB = 1024;
const MIB = 1024 * 1024;

/** Defaults of the limits. `hard_output_bytes` defaults to 4× the retained caps. */
export const DEFAULT_LIMITS: Readonly<Omit<AdapterLimits, "hard_output_bytes">> = {
  timeout_ms: 10 * 60_000,
  grace_ms: 5_000,
  max_stdout_bytes: 256 * KIB,
  max_stderr_bytes: 256 * KIB,
  max_manifest_bytes: 64 * KIB,
  max_artifacts: 64,
  max_artifact_bytes: 10 * MIB,
  max_total_artifact_bytes: 50 * MIB,
};

/** Hard maxima: a definition asking for more is invalid. */
export const MAX_LIMITS: Readonly<AdapterLimits> = {
  timeout_ms: 30 * 60_000,
  grace_ms: 60_000,
  max_stdout_bytes: 10 * MIB,
  max_stderr_bytes: 10 * MIB,
  hard_output_bytes: 80 * MIB,
  max_manifest_bytes: MIB,
  max_artifacts: 1024,
  max_artifact_bytes: 100 * MIB,
  max_total_artifact_bytes: 500 * MIB,
};

/** A validated `adapter.v1` definition. */
export interface AdapterDefinition {
  schema: "adapter.v1";
  id: string;
  version: string;
  description: string;
  command: {
    argv: string[];
    stdin: "packet_json" | "prompt_text" | "none";
    append_packet_path: boolean;
  };
  lanes: string[];
  workflows: string[];
  max_authority: string[];
  authority_translation: Record<string, string>;
  env: { allow: string[]; values: Record<string, string>; credentials: string[] };
  limits: AdapterLimits;
  workspace: {
    requires_worktree: boolean;
    protected_branches: string[];
    branch_prefixes: string[];
  };
  tool_probe: {
    argv: string[];
    version_regex: string;
    min_version: string;
    allow_prerelease: boolean;
  } | null;
  network: "none" | "required";
}

/** A definition problem: the code and the field it concerns. */
export class DefinitionProblem extends Error {
  constructor(
    readonly code: Extract<FailureCode, "adapter_config_invalid" | "forbidden_executable">,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** Id shape: lowercase slug, no `..`. */
export const ADAPTER_ID = /^[a-z0-9][a-z0-9._-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Default protected branches. */
export const DEFAULT_PROTECTED_BRANCHES = ["main", "master", "trunk", "release*", "production"];

const SHELLS = [
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "fish",
  "csh",
  "tcsh",
  "ash",
  "cmd",
  "powershell",
  "pwsh",
  "busybox",
];
const RUNNERS = [
  "npx",
  "npm",
  "pnpm",
  "pnpx",
  "yarn",
  "bunx",
  "bun",
  "pipx",
  "uvx",
  "uv",
  "deno",
  "corepack",
  "gem",
  "go",
  "cargo",
];
const DOWNLOADERS = [
  "curl",
  "wget",
  "aria2c",
  "fetch",
  "scp",
  "rsync",
  "ftp",
  "tftp",
  "nc",
  "ncat",
  "socat",
];
const WRAPPERS = [
  "env",
  "sudo",
  "doas",
  "su",
  "xargs",
  "nohup",
  "timeout",
  "nice",
  "ionice",
  "time",
  "exec",
  "setsid",
  "stdbuf",
  "chroot",
  "runuser",
  "start",
  "script",
  "watch",
  "strace",
];

/** Forbidden `argv[0]` names by category, compared case- and extension-normalized. */
export const FORBIDDEN_EXECUTABLES: ReadonlyMap<string, string> = new Map([
  ...SHELLS.map((n) => [n, "a shell"] as const),
  ...RUNNERS.map((n) => [n, "a package runner"] as const),
  ...DOWNLOADERS.map((n) => [n, "a downloader"] as const),
  ...WRAPPERS.map((n) => [n, "an environment wrapper"] as const),
]);

/** `/usr/bin/BASH.exe` → `bash`. */
export function executableName(command: string): string {
  const base = (command.split(/[\\/]/).pop() ?? command).toLowerCase();
  return base.replace(/\.(exe|cmd|bat|com|ps1|sh)$/, "");
}

/**
 * Refuses shells, package runners, downloaders, env wrappers and inline interpreter code, for
 * `argv[0]` and for the command a wrapper launches: whatever follows the first `--` (the
 * shipped command adapter runs `node ./command/command-adapter.mjs … -- <tool> <args>`), so a
 * wrapper cannot smuggle in what the definition itself may not name.
 */
export function checkCommand(argv: readonly string[], field: string): void {
  const separator = argv.indexOf("--");
  if (separator > 0 && separator < argv.length - 1)
    checkOne(argv.slice(separator + 1), `${field}[${separator + 1}]`, field);
  checkOne(argv, `${field}[0]`, field);
}

function checkOne(argv: readonly string[], firstField: string, field: string): void {
  const first = argv[0];
  if (first === undefined)
    throw new DefinitionProblem("adapter_config_invalid", field, "argv must not be empty");
  const category = FORBIDDEN_EXECUTABLES.get(executableName(first));
  if (category !== undefined) {
    throw new DefinitionProblem(
      "forbidden_executable",
      firstField,
      `${executableName(first)} is ${category}; adapters launch their runtime directly`,
    );
  }
  const inline = detectInlineCode(first, argv.slice(1));
  if (inline !== null) {
    throw new DefinitionProblem(
      "forbidden_executable",
      field,
      `${inline.interpreter} ${inline.flag} runs inline code; point argv at a script file`,
    );
  }
}

const TOP = new Set([
  "schema",
  "id",
  "version",
  "description",
  "command",
  "lanes",
  "workflows",
  "max_authority",
  "authority_translation",
  "env",
  "limits",
  "workspace",
  "tool_probe",
  "network",
]);

function bad(field: string, message: string): never {
  throw new DefinitionProblem("adapter_config_invalid", field, message);
}

function onlyKeys(value: JsonObject, allowed: readonly string[], field: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) bad(field === "" ? key : `${field}.${key}`, "unknown field");
  }
}

function text(value: JsonValue | undefined, field: string, required = true): string {
  if (value === undefined && !required) return "";
  if (typeof value !== "string") bad(field, "must be a string");
  if (CONTROL.test(value)) bad(field, "must not contain control characters");
  return value;
}

function list(value: JsonValue | undefined, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) bad(field, "must be a list of strings");
  return value.map((item, i) => text(item, `${field}[${i}]`));
}

function mapping(value: JsonValue | undefined, field: string): JsonObject {
  if (value === undefined) return {};
  if (!isJsonObject(value)) bad(field, "must be a mapping");
  return value;
}

function bool(value: JsonValue | undefined, field: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") bad(field, "must be true or false");
  return value;
}

function limitsOf(raw: JsonObject): AdapterLimits {
  onlyKeys(raw, Object.keys(MAX_LIMITS), "limits");
  const read = (key: keyof AdapterLimits, fallback: number): number => {
    const value = raw[key];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0)
      bad(`limits.${key}`, "must be a positive integer");
    if (value > MAX_LIMITS[key]) bad(`limits.${key}`, `must be at most ${MAX_LIMITS[key]}`);
    return value;
  };
  const limits = {
    timeout_ms: read("timeout_ms", DEFAULT_LIMITS.timeout_ms),
    grace_ms: read("grace_ms", DEFAULT_LIMITS.grace_ms),
    max_stdout_bytes: read("max_stdout_bytes", DEFAULT_LIMITS.max_stdout_bytes),
    max_stderr_bytes: read("max_stderr_bytes", DEFAULT_LIMITS.max_stderr_bytes),
    max_manifest_bytes: read("max_manifest_bytes", DEFAULT_LIMITS.max_manifest_bytes),
    max_artifacts: read("max_artifacts", DEFAULT_LIMITS.max_artifacts),
    max_artifact_bytes: read("max_artifact_bytes", DEFAULT_LIMITS.max_artifact_bytes),
    max_total_artifact_bytes: read(
      "max_total_artifact_bytes",
      DEFAULT_LIMITS.max_total_artifact_bytes,
    ),
    hard_output_bytes: 0,
  };
  limits.hard_output_bytes = read(
    "hard_output_bytes",
    4 * (limits.max_stdout_bytes + limits.max_stderr_bytes),
  );
  return limits;
}

/** Validates a parsed `adapter.v1` document; `expectedId` is the id the file is named for. */
export function parseAdapterDefinition(doc: JsonValue, expectedId?: string): AdapterDefinition {
  if (!isJsonObject(doc)) bad("(document)", "an adapter definition is a mapping");
  onlyKeys(doc, [...TOP], "");
  if (doc.schema !== "adapter.v1") bad("schema", 'must be "adapter.v1"');
  const id = text(doc.id, "id");
  if (!ADAPTER_ID.test(id) || id.includes(".."))
    bad("id", "must match ^[a-z0-9][a-z0-9._-]*$ without ..");
  if (expectedId !== undefined && id !== expectedId)
    bad("id", `must equal the file name (${expectedId})`);
  const command = mapping(doc.command, "command");
  onlyKeys(command, ["argv", "stdin", "append_packet_path"], "command");
  const argv = list(command.argv, "command.argv");
  checkCommand(argv, "command.argv");
  const stdin = command.stdin ?? "packet_json";
  if (stdin !== "packet_json" && stdin !== "prompt_text" && stdin !== "none")
    bad("command.stdin", "must be packet_json, prompt_text or none");
  const lanes = list(doc.lanes, "lanes");
  if (lanes.length === 0) bad("lanes", "must name at least one lane");
  const maxAuthority = list(doc.max_authority, "max_authority");
  maxAuthority.forEach((word, i) => {
    if (!isAuthorityWord(word)) bad(`max_authority[${i}]`, `unknown authority word ${word}`);
  });
  const translation = mapping(doc.authority_translation, "authority_translation");
  const env = mapping(doc.env, "env");
  onlyKeys(env, ["allow", "values", "credentials"], "env");
  const allow = list(env.allow, "env.allow");
  allow.forEach((name, i) => {
    if (!ENV_NAME.test(name)) bad(`env.allow[${i}]`, `${name} is not an environment variable name`);
  });
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(mapping(env.values, "env.values"))) {
    if (!ENV_NAME.test(name)) bad(`env.values.${name}`, "is not an environment variable name");
    values[name] = text(value, `env.values.${name}`);
  }
  const credentials = list(env.credentials, "env.credentials");
  credentials.forEach((name, i) => {
    if (!ENV_NAME.test(name))
      bad(`env.credentials[${i}]`, `${name} is not a credential reference name`);
  });
  const workspace = mapping(doc.workspace, "workspace");
  onlyKeys(workspace, ["requires_worktree", "protected_branches", "branch_prefixes"], "workspace");
  let probe: AdapterDefinition["tool_probe"] = null;
  if (doc.tool_probe !== undefined) {
    const raw = mapping(doc.tool_probe, "tool_probe");
    onlyKeys(raw, ["argv", "version_regex", "min_version", "allow_prerelease"], "tool_probe");
    const probeArgv = list(raw.argv, "tool_probe.argv");
    checkCommand(probeArgv, "tool_probe.argv");
    const regex = text(raw.version_regex, "tool_probe.version_regex");
    try {
      new RegExp(regex);
    } catch {
      bad("tool_probe.version_regex", "is not a regular expression");
    }
    const minVersion = text(raw.min_version, "tool_probe.min_version");
    if (parseToolVersion(minVersion) === undefined)
      bad("tool_probe.min_version", `${minVersion} is not a version (like 1.2.3)`);
    probe = {
      argv: probeArgv,
      version_regex: regex,
      min_version: minVersion,
      allow_prerelease: bool(raw.allow_prerelease, "tool_probe.allow_prerelease", false),
    };
  }
  const network = doc.network ?? "none";
  if (network !== "none" && network !== "required") bad("network", "must be none or required");
  return {
    schema: "adapter.v1",
    id,
    version: text(doc.version, "version"),
    description: text(doc.description, "description", false),
    command: {
      argv,
      stdin,
      append_packet_path: bool(command.append_packet_path, "command.append_packet_path", false),
    },
    lanes,
    workflows: list(doc.workflows, "workflows"),
    max_authority: maxAuthority,
    authority_translation: Object.fromEntries(
      Object.entries(translation).map(([k, v]) => [k, text(v, `authority_translation.${k}`)]),
    ),
    env: { allow, values, credentials },
    limits: limitsOf(mapping(doc.limits, "limits")),
    workspace: {
      requires_worktree: bool(workspace.requires_worktree, "workspace.requires_worktree", false),
      protected_branches:
        workspace.protected_branches === undefined
          ? [...DEFAULT_PROTECTED_BRANCHES]
          : list(workspace.protected_branches, "workspace.protected_branches"),
      branch_prefixes: list(workspace.branch_prefixes, "workspace.branch_prefixes"),
    },
    tool_probe: probe,
    network,
  };
}

/** `refs/heads/x` and `origin/x` name the branch `x`. */
export function normalizeBranch(branch: string): string {
  return branch
    .replace(/^refs\/heads\//, "")
    .replace(/^refs\/remotes\/[^/]+\//, "")
    .replace(/^origin\//, "");
}

/** True when `branch` is protected (glob `*` at the end matches any suffix). */
export function isProtectedBranch(branch: string, protectedList: readonly string[]): boolean {
  const name = normalizeBranch(branch);
  return protectedList.some((pattern) => {
    const p = normalizeBranch(pattern);
    return p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p;
  });
}
