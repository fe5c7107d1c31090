/**
 * `runx skill inspect`: one package and its selected runner as upstream's
 * `runx.skill.inspect.v1` projection, with the runner's readiness — the environment names it
 * declares and its credential — judged the way a run would judge them. Nothing runs, nothing
 * is written to the receipt store, and no credential or environment value leaves this module.
 */
import { credentialReadiness } from "../credentials/readiness.js";
import type { CredentialReadiness } from "../credentials/readiness.js";
import { requirementOf } from "../credentials/resolve.js";
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import type { RunSkillDeps } from "../run/context.js";
import { prepareRun } from "../run/prepare.js";
import { displayPath } from "../workspace.js";

/** What `runx skill inspect` asks for. */
export interface InspectSkillRequest {
  ref: string;
  runner?: string;
  /** `--profile`: the stored profile a run would be told to use. */
  profile?: string;
  /** `--digest` for registry refs. */
  registryDigest?: string;
}

/** The readiness of the selected runner: the least ready of environment and credential. */
export type ReadinessStatus = "ready" | "needs_environment" | "needs_credential";

/** The inspection document (`--json` prints it as is). */
export interface SkillInspection extends JsonObject {
  schema: "runx.skill.inspect.v1";
  status: "ok";
  name: string;
  skill_path: string;
  package_digest: string;
  runners: string[];
  runner: JsonObject;
  execution_closure: { closure_digest: string };
  readiness: { status: ReadinessStatus };
}

function inputsOf(runner: RunnerDefinition): JsonObject[] {
  return Object.values(runner.inputs).map((input) => ({
    name: input.name,
    type: input.type,
    required: input.required,
    ...(input.description !== undefined ? { description: input.description } : {}),
  }));
}

/** Declared environment names and whether the workspace snapshot has a value (never the value). */
function environmentReadiness(
  runner: RunnerDefinition,
  env: Readonly<Record<string, string | undefined>>,
): JsonObject | undefined {
  const declared = "environment" in runner ? runner.environment : undefined;
  if (declared === undefined) return undefined;
  const variables = [
    ...declared.required.map((name) => ({ name, required: true })),
    ...declared.optional.map((name) => ({ name, required: false })),
  ].map((v) => ({ ...v, available: (env[v.name] ?? "") !== "" }));
  if (variables.length === 0) return undefined;
  const missing = variables.filter((v) => v.required && !v.available).map((v) => v.name);
  return {
    status: missing.length === 0 ? "ready" : "needs_environment",
    variables,
    ...(missing.length > 0 ? { missing } : {}),
  };
}

/** Inspects `request.ref` (see the module comment). */
export async function inspectSkill(
  deps: RunSkillDeps,
  request: InspectSkillRequest,
): Promise<SkillInspection> {
  const prep = await prepareRun(deps, {
    ref: request.ref,
    ...(request.runner !== undefined ? { runner: request.runner } : {}),
    ...(request.registryDigest !== undefined ? { registryDigest: request.registryDigest } : {}),
  });
  const { pkg, runner } = prep;
  const env = deps.workspaceEnv ?? deps.env;
  const inspection: SkillInspection = {
    schema: "runx.skill.inspect.v1",
    status: "ok",
    name: pkg.name,
    skill_path: displayPath(deps.paths.root, pkg.graphDocumentPath ?? pkg.packageDir),
    package_digest: prep.packageDigest,
    ...(pkg.description !== undefined ? { description: pkg.description } : {}),
    ...(pkg.profile?.version !== undefined ? { version: pkg.profile.version } : {}),
    runners: Object.keys(pkg.runners),
    runner: { name: runner.name, type: runner.type, inputs: inputsOf(runner) },
    execution_closure: { closure_digest: prep.closureDigest },
    readiness: { status: "ready" },
  };
  const environment = environmentReadiness(runner, env);
  if (environment !== undefined) {
    inspection.environment = environment;
    if (environment.status !== "ready") inspection.readiness = { status: "needs_environment" };
  }
  const credential = await runnerCredentialReadiness(deps, prep.pkg, runner, request.profile);
  if (credential !== undefined) {
    inspection.credential = credential;
    if (credential.status !== "ready") inspection.readiness = { status: "needs_credential" };
  }
  return inspection;
}

/**
 * The readiness of the credential `runner` declares, or undefined when it declares none. Shared
 * with `runx mcp serve`, which refuses to start while a served skill's credential is missing.
 */
export async function runnerCredentialReadiness(
  deps: Pick<RunSkillDeps, "paths" | "env" | "workspaceEnv" | "dotenvNames" | "runxHome">,
  pkg: { name: string; profile?: { credentials?: Readonly<Record<string, JsonObject>> } },
  runner: RunnerDefinition,
  explicitProfile?: string,
): Promise<CredentialReadiness | undefined> {
  if (runner.credential === undefined) {
    if (explicitProfile !== undefined) {
      throw new RuntimeError(
        "USAGE",
        `--profile is only valid when the selected runner declares a credential (runner ${runner.name} declares none)`,
      );
    }
    return undefined;
  }
  return credentialReadiness({
    requirement: requirementOf(pkg.profile?.credentials ?? {}, runner.credential),
    skillName: pkg.name,
    explicitProfile,
    runxHome: deps.runxHome,
    workspaceRoot: deps.paths.root,
    env: deps.workspaceEnv ?? deps.env,
    ...(deps.dotenvNames !== undefined ? { dotenvNames: deps.dotenvNames } : {}),
  });
}
