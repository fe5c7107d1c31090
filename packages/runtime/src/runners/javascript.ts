/**
 * The `javascript` runner: a deterministic module evaluated in a separate
 * `node` process (its own process group, environment `{TZ: "UTC"}`, Node's permission model
 * allowing reads of the package and the host file only) that runs the module in a worker
 * thread with a fixed heap, inside a fresh vm context with no process, require, fs, network,
 * timers, clock or randomness. See javascript-host.mjs for the boundary itself.
 *
 * The host file must exist at runtime next to this module, or at `dist/javascript-host.js`
 * in a bundle (see {@link locateJavascriptHost}).
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { RuntimeError } from "../errors.js";
import { selectDeclaredEnvironment, type DeclaredEnvironment } from "../process/environment.js";
import type { StateIsolation } from "../process/state-cover.js";
import { superviseProcess, type SupervisedProcessResult } from "../process/supervise.js";
import { JAVASCRIPT_TIMEOUT_RANGE } from "../parser/runner-limits.js";
import {
  REASON_CODE,
  isJsonObject,
  tailText,
  type RunnerDisposition,
  type RunnerReasonCode,
} from "./outcome.js";

/** Wall clock when the runner declares none. */
export const JAVASCRIPT_DEFAULT_TIMEOUT_SECONDS = 2;
/** Accepted `timeout_seconds` range (checked at package load too: limits.ts). */
export { JAVASCRIPT_TIMEOUT_RANGE } from "../parser/runner-limits.js";
/** Worker I/O limit per direction (inputs in, result out). */
export const JAVASCRIPT_IO_LIMIT_BYTES = 4 * 1024 * 1024;
/** Fixed limits of the worker. */
export const JAVASCRIPT_LIMITS = {
  heapMb: 64,
  stackMb: 4,
  sourceBytes: 4 * 1024 * 1024,
  outputBytes: JAVASCRIPT_IO_LIMIT_BYTES,
} as const;

/** The fields of a javascript runner definition this runner reads. */
export interface JavascriptSpec {
  module: string;
  export?: string | undefined;
  timeout_seconds?: number | undefined;
  environment?: DeclaredEnvironment | undefined;
  /** Declared structured outputs; when present the result must be a JSON object. */
  outputs?: unknown;
}

/** Everything one invocation needs. */
export interface RunJavascriptOptions {
  spec: JavascriptSpec;
  packageDir: string;
  /** Validated inputs. */
  inputs: Readonly<Record<string, unknown>>;
  /** Read only for the names the runner declares. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the host process group; the result is `killed`. */
  signal?: AbortSignal | undefined;
  /** Overrides {@link locateJavascriptHost}. */
  hostPath?: string | undefined;
  /** Run the host under Node's permission model (default true). */
  permissionModel?: boolean | undefined;
  /** runx's own state roots and the workspace, covered from the host where the host allows it. */
  hideState?: { roots: readonly string[]; workspaceRoot: string } | undefined;
}

/** Why a javascript invocation failed. */
export type JavascriptFailureKind =
  | "thrown"
  | "output_invalid"
  | "output_too_large"
  | "memory_limit"
  | "never_settled"
  | "host_error";

/** How the invocation ended. */
export interface JavascriptResult {
  disposition: RunnerDisposition;
  reasonCode: RunnerReasonCode;
  /** The returned object; any other JSON value is wrapped as `{result: value}`. Empty unless closed. */
  output: Record<string, unknown>;
  summary?: string;
  failureKind?: JavascriptFailureKind;
  durationMs: number;
  /** Module path relative to the package and the export that was called. */
  module: string;
  exportName: string;
  /** Whether runx's own state was covered from the host process (process/state-cover.ts). */
  stateIsolation: StateIsolation;
}

interface HostReply {
  ok: boolean;
  value?: unknown;
  kind?: string;
  message?: string;
  specifier?: string;
}

/**
 * The host script: `javascript-host.mjs` beside this file (source), `dist/javascript-host.js`
 * when this code is bundled into `dist/` or `dist/chunks/`.
 */
export function locateJavascriptHost(): string {
  const candidates = [
    "./javascript-host.mjs",
    "./javascript-host.js",
    "../javascript-host.js",
    "../javascript-host.mjs",
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new RuntimeError(
    "INTERNAL",
    "the javascript runner host script is missing from this installation",
  );
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function checkSpec(spec: JavascriptSpec): { exportName: string; timeoutSeconds: number } {
  if (typeof spec.module !== "string" || spec.module === "") {
    throw new RuntimeError(
      "MODULE_INVALID",
      "javascript module must be a relative .mjs or .js path",
      { path: "module" },
    );
  }
  const exportName = spec.export ?? "default";
  if (typeof exportName !== "string" || !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(exportName)) {
    throw new RuntimeError("PACKAGE_INVALID", "export must name a JavaScript function", {
      path: "export",
    });
  }
  const timeoutSeconds = spec.timeout_seconds ?? JAVASCRIPT_DEFAULT_TIMEOUT_SECONDS;
  const { min, max } = JAVASCRIPT_TIMEOUT_RANGE;
  if (
    typeof timeoutSeconds !== "number" ||
    !Number.isFinite(timeoutSeconds) ||
    timeoutSeconds < min ||
    timeoutSeconds > max
  ) {
    throw new RuntimeError("PACKAGE_INVALID", `timeout_seconds must be between ${min} and ${max}`, {
      path: "timeout_seconds",
    });
  }
  return { exportName, timeoutSeconds };
}

/** The module's real path, contained in the package (PATH_ESCAPE) and a `.mjs`/`.js` file (MODULE_INVALID). */
export function resolveModulePath(packageDir: string, module: string): string {
  if (isAbsolute(module) || /^[A-Za-z]:/.test(module) || module.includes("\0")) {
    throw new RuntimeError(
      "MODULE_INVALID",
      "javascript module must be a relative path inside the package",
      {
        path: "module",
      },
    );
  }
  if (!/\.(mjs|js)$/.test(module)) {
    throw new RuntimeError("MODULE_INVALID", "javascript module must be a .mjs or .js file", {
      path: "module",
    });
  }
  const root = realpathSync(packageDir);
  const escape = new RuntimeError("PATH_ESCAPE", "javascript module resolves outside the package", {
    path: "module",
  });
  const candidate = resolve(root, module);
  if (!isInside(candidate, root)) throw escape;
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    throw new RuntimeError("MODULE_INVALID", `javascript module ${module} does not exist`, {
      path: "module",
    });
  }
  if (!isInside(real, root)) throw escape;
  if (!statSync(real).isFile()) {
    throw new RuntimeError("MODULE_INVALID", `javascript module ${module} is not a file`, {
      path: "module",
    });
  }
  return real;
}

function hostArgs(hostPath: string, packageRoot: string, permissionModel: boolean): string[] {
  const args = [
    "--experimental-vm-modules",
    "--no-warnings",
    "--disallow-code-generation-from-strings",
    "--no-addons",
    "--max-old-space-size=256",
  ];
  if (permissionModel) {
    const major = Number(process.versions.node.split(".")[0]);
    args.push(
      major >= 23 ? "--permission" : "--experimental-permission",
      `--allow-fs-read=${hostPath}`,
      `--allow-fs-read=${packageRoot}`,
      "--allow-worker",
    );
  }
  args.push(hostPath);
  return args;
}

function parseReply(stdout: Buffer): HostReply | undefined {
  const lines = stdout.toString("utf8").trimEnd().split("\n");
  try {
    const reply: unknown = JSON.parse(lines[lines.length - 1] ?? "");
    return isJsonObject(reply) && typeof reply.ok === "boolean"
      ? (reply as unknown as HostReply)
      : undefined;
  } catch {
    return undefined;
  }
}

function interpret(
  proc: SupervisedProcessResult,
  spec: JavascriptSpec,
  base: { durationMs: number; module: string; exportName: string; timeoutSeconds: number },
): JavascriptResult {
  const end = (
    disposition: RunnerDisposition,
    extra: {
      summary?: string;
      failureKind?: JavascriptFailureKind;
      output?: Record<string, unknown>;
    } = {},
  ): JavascriptResult => ({
    disposition,
    reasonCode: REASON_CODE[disposition],
    output: extra.output ?? {},
    ...(extra.summary === undefined ? {} : { summary: extra.summary }),
    ...(extra.failureKind === undefined ? {} : { failureKind: extra.failureKind }),
    durationMs: base.durationMs,
    module: base.module,
    exportName: base.exportName,
    stateIsolation: proc.stateIsolation,
  });

  if (proc.interrupted) return end("killed", { summary: "interrupted; the worker was terminated" });
  if (proc.timedOut)
    return end("timed_out", { summary: `exceeded the ${base.timeoutSeconds}s wall-clock limit` });
  const reply = proc.exitCode === 0 && !proc.stdoutTruncated ? parseReply(proc.stdout) : undefined;
  if (reply === undefined) {
    const stderr = tailText(proc.stderr);
    if (/heap out of memory|Reached heap limit/i.test(stderr)) {
      return end("failed", {
        summary: "the module exceeded the worker memory limit",
        failureKind: "memory_limit",
      });
    }
    const why = proc.stdoutTruncated
      ? "the result exceeds the worker output limit"
      : stderr || "the worker host failed";
    return end("failed", {
      summary: why,
      failureKind: proc.stdoutTruncated ? "output_too_large" : "host_error",
    });
  }
  if (!reply.ok) {
    if (reply.kind === "module_invalid") {
      throw new RuntimeError(
        "MODULE_INVALID",
        reply.message ?? "the javascript module is invalid",
        {
          path: "module",
          ...(reply.specifier === undefined ? {} : { specifier: reply.specifier }),
        },
      );
    }
    const kinds: readonly string[] = [
      "thrown",
      "output_invalid",
      "output_too_large",
      "memory_limit",
      "never_settled",
    ];
    const failureKind = (
      kinds.includes(reply.kind ?? "") ? reply.kind : "host_error"
    ) as JavascriptFailureKind;
    return end("failed", { summary: reply.message ?? "the module failed", failureKind });
  }
  if (isJsonObject(reply.value)) return end("closed", { output: reply.value });
  if (spec.outputs !== undefined && spec.outputs !== null) {
    return end("failed", {
      summary: "the runner declares outputs but the export did not return a JSON object",
      failureKind: "output_invalid",
    });
  }
  return end("closed", { output: { result: reply.value } });
}

/**
 * Runs a javascript runner once. Throws before anything is started for an invalid module path
 * (MODULE_INVALID / PATH_ESCAPE), undeclared-or-secret environment (ENV_MISSING /
 * POLICY_DENIED) or oversized inputs (INPUTS_TOO_LARGE), and MODULE_INVALID naming the
 * specifier for a refused import; everything else ends in a result.
 */
export async function runJavascript(opts: RunJavascriptOptions): Promise<JavascriptResult> {
  const { spec } = opts;
  const { exportName, timeoutSeconds } = checkSpec(spec);
  const modulePath = resolveModulePath(opts.packageDir, spec.module);
  const packageRoot = realpathSync(opts.packageDir);
  const environment = selectDeclaredEnvironment(opts.baseEnv, spec.environment);
  const inputsJson = JSON.stringify(opts.inputs);
  if (Buffer.byteLength(inputsJson) > JAVASCRIPT_IO_LIMIT_BYTES) {
    throw new RuntimeError(
      "INPUTS_TOO_LARGE",
      `inputs exceed the ${JAVASCRIPT_IO_LIMIT_BYTES}-byte worker input limit`,
    );
  }
  const hostPath = realpathSync(opts.hostPath ?? locateJavascriptHost());
  const module = relative(packageRoot, modulePath).split(sep).join("/");
  const request = JSON.stringify({
    packageDir: packageRoot,
    module,
    exportName,
    inputsJson,
    environment,
    limits: JAVASCRIPT_LIMITS,
  });
  const proc = await superviseProcess({
    command: process.execPath,
    args: hostArgs(hostPath, packageRoot, opts.permissionModel ?? true),
    cwd: packageRoot,
    env: { TZ: "UTC" },
    stdin: request,
    timeoutMs: timeoutSeconds * 1000,
    graceMs: 200,
    abortGraceMs: 200,
    signal: opts.signal,
    maxBytesPerStream: JAVASCRIPT_IO_LIMIT_BYTES + 64 * 1024,
    // The host and Node itself must stay reachable should they live under a state root.
    hideState:
      opts.hideState === undefined
        ? undefined
        : {
            ...opts.hideState,
            keep: [packageRoot, dirname(hostPath), dirname(realpathSync(process.execPath))],
          },
  });
  return interpret(proc, spec, { durationMs: proc.durationMs, module, exportName, timeoutSeconds });
}
