/**
 * The environment a runner child receives: deny by default. Only the baseline
 * allowlist, the runner's declared names, its literal `env`, delivered credentials and the
 * runx-provided `RUNX_*` input variables cross; runx's own secrets never do.
 */
import { isRunxSecretName } from "../parser/secret-names.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";

/** Variables passed through from the base environment when set (no proxy vars). */
export const BASELINE_ENV_ALLOWLIST: readonly string[] = [
  "PATH",
  "HOME",
  "TMPDIR",
  "TMP",
  "TEMP",
  "SystemRoot",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "USER",
  "LOGNAME",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "SSL_CERT_DIR",
  "SSL_CERT_FILE",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TERM",
  "COLORTERM",
  "TZ",
];

/** `RUNX_INPUTS_JSON` is set only when the document is at most this many bytes. */
export const INPUTS_JSON_ENV_MAX_BYTES = 48 * 1024;
/** `RUNX_INPUT_<NAME>` is set only when the value is at most this many bytes. */
export const INPUT_ENV_MAX_BYTES = 8 * 1024;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INPUT_REF = /^\$input\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)$/;

/** Environment names a runner declares (`environment.required` / `environment.optional`). */
export interface DeclaredEnvironment {
  required?: readonly string[] | undefined;
  optional?: readonly string[] | undefined;
}

/** Files holding the inputs, as written by {@link writeInputFiles}. */
export interface InputFiles {
  /** JSON document with every input (`RUNX_INPUTS_PATH`). */
  inputsPath: string;
  /** Input name → file with that value (`RUNX_INPUT_<NAME>_PATH`). */
  perInput: Readonly<Record<string, string>>;
}

/** Everything {@link buildChildEnvironment} combines. */
export interface ChildEnvironmentOptions {
  /** The invoking process's environment; only allowlisted and declared names are read. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  declared?: DeclaredEnvironment | undefined;
  /** The runner's `env` map: literal values, or exactly `$input.<path>`. */
  literalEnv?: Readonly<Record<string, string>> | undefined;
  /** Variables delivered by the credential contract (already resolved). */
  credentialEnv?: Readonly<Record<string, string>> | undefined;
  inputs: Readonly<Record<string, unknown>>;
  /** Becomes `RUNX_CWD`. */
  workspaceRoot: string;
  inputFiles?: InputFiles | undefined;
}

/** `RUNX_INPUT_<NAME>` suffix: upper-cased, every non-alphanumeric character becomes `_`. */
export function inputEnvName(inputName: string): string {
  return inputName.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** A value as a child sees it: strings raw, everything else as JSON. */
export function inputValueText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
}

/** Looks up a dotted path in the inputs; undefined when any segment is missing. */
export function lookupInputPath(inputs: Readonly<Record<string, unknown>>, path: string): unknown {
  let current: unknown = inputs;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function checkName(name: string, field: string): void {
  if (!ENV_NAME.test(name)) {
    throw new RuntimeError("PACKAGE_INVALID", `${field} names an invalid environment variable`, {
      path: field,
      variable: name,
    });
  }
  if (isRunxSecretName(name)) {
    throw new RuntimeError(
      "POLICY_DENIED",
      `${name} is a runx secret and is never passed to runners`,
      {
        path: field,
        variable: name,
      },
    );
  }
}

/**
 * The declared non-secret names and their values from the base environment. Missing required
 * names fail with ENV_MISSING; declaring a runx secret fails with POLICY_DENIED.
 */
export function selectDeclaredEnvironment(
  baseEnv: Readonly<Record<string, string | undefined>>,
  declared: DeclaredEnvironment | undefined,
): Record<string, string> {
  const selected: Record<string, string> = {};
  for (const name of declared?.required ?? []) {
    checkName(name, "environment.required");
    const value = baseEnv[name];
    if (value === undefined) {
      throw new RuntimeError("ENV_MISSING", `required environment variable ${name} is not set`, {
        variable: name,
      });
    }
    selected[name] = value;
  }
  for (const name of declared?.optional ?? []) {
    checkName(name, "environment.optional");
    const value = baseEnv[name];
    if (value !== undefined) selected[name] = value;
  }
  return selected;
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The `RUNX_*` variables describing the inputs and workspace. */
function runxProvidedEnvironment(opts: ChildEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = { RUNX_CWD: opts.workspaceRoot };
  const defined = Object.entries(opts.inputs).filter(([, value]) => value !== undefined);
  const document = JSON.stringify(Object.fromEntries(defined));
  if (utf8Length(document) <= INPUTS_JSON_ENV_MAX_BYTES) env.RUNX_INPUTS_JSON = document;

  const owners = new Map<string, string>();
  const pathVars: Record<string, string> = {};
  for (const [name, value] of defined) {
    const suffix = inputEnvName(name);
    const previous = owners.get(suffix);
    if (previous !== undefined) {
      throw new RuntimeError(
        "INPUT_INVALID",
        `inputs ${previous} and ${name} both map to RUNX_INPUT_${suffix}`,
        { inputs: [previous, name] },
      );
    }
    owners.set(suffix, name);
    const text = inputValueText(value);
    // NUL cannot appear in an environment value; the value is still in RUNX_INPUTS_JSON.
    if (utf8Length(text) <= INPUT_ENV_MAX_BYTES && !text.includes("\0")) {
      env[`RUNX_INPUT_${suffix}`] = text;
    }
    const file = opts.inputFiles?.perInput[name];
    if (file !== undefined) pathVars[`RUNX_INPUT_${suffix}_PATH`] = file;
  }
  if (opts.inputFiles !== undefined) env.RUNX_INPUTS_PATH = opts.inputFiles.inputsPath;
  // A value variable wins over a colliding path variable (inputs `x_path` and `x`).
  for (const [key, file] of Object.entries(pathVars)) env[key] ??= file;
  return env;
}

/**
 * The complete environment for a runner child. Later layers win: baseline allowlist, declared
 * names, literal `env`, credential delivery, then the runx-provided variables.
 */
export function buildChildEnvironment(opts: ChildEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASELINE_ENV_ALLOWLIST) {
    const value = opts.baseEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, selectDeclaredEnvironment(opts.baseEnv, opts.declared));

  for (const [name, raw] of Object.entries(opts.literalEnv ?? {})) {
    checkName(name, `env.${name}`);
    const ref = INPUT_REF.exec(raw);
    if (ref?.[1] === undefined) {
      env[name] = raw;
      continue;
    }
    const value = lookupInputPath(opts.inputs, ref[1]);
    if (value !== undefined) env[name] = inputValueText(value);
  }

  for (const [name, value] of Object.entries(opts.credentialEnv ?? {})) {
    checkName(name, "credential delivery");
    if (
      opts.literalEnv !== undefined &&
      Object.prototype.hasOwnProperty.call(opts.literalEnv, name)
    ) {
      throw new RuntimeError(
        "PACKAGE_INVALID",
        `credential delivery variable ${name} collides with runner env`,
        {
          variable: name,
        },
      );
    }
    env[name] = value;
  }

  return Object.assign(env, runxProvidedEnvironment(opts));
}

/**
 * Writes `inputs.json` and one file per input into `scratchDir` (strings raw, others JSON) for
 * `RUNX_INPUTS_PATH` / `RUNX_INPUT_<NAME>_PATH`. The caller owns and removes the directory.
 */
export function writeInputFiles(
  scratchDir: string,
  inputs: Readonly<Record<string, unknown>>,
): InputFiles {
  mkdirSync(scratchDir, { recursive: true, mode: 0o700 });
  const defined = Object.entries(inputs).filter(([, value]) => value !== undefined);
  const inputsPath = join(scratchDir, "inputs.json");
  writeFileSync(inputsPath, JSON.stringify(Object.fromEntries(defined)), { mode: 0o600 });
  const perInput: Record<string, string> = {};
  for (const [name, value] of defined) {
    const file = join(scratchDir, `input-${inputEnvName(name)}`);
    writeFileSync(file, inputValueText(value), { mode: 0o600 });
    perInput[name] = file;
  }
  return { inputsPath, perInput };
}

export { isRunxSecretName } from "../parser/secret-names.js";
