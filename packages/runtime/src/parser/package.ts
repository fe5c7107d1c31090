/**
 * A skill package = SKILL.md + optional X.yaml. Combines both documents into one
 * typed value and selects the runner to execute. Pure: callers pass the file texts.
 */
import { buildExecutionProfile, failIn } from "./execution-profile.js";
import type { ExecutionProfile } from "./execution-profile.js";
import { normalizeInputDeclarations } from "./input-declarations.js";
import type { FailAt, InputDeclaration } from "./input-declarations.js";
import { isJsonObject } from "./json.js";
import type { JsonObject, JsonValue } from "./json.js";
import { idempotencyOf, normalizeRunner, retryOf } from "./runners.js";
import type { IdempotencyDeclaration, RetryPolicy, RunnerDefinition } from "./runners.js";
import { parseSkillMarkdownDocument } from "./skill-markdown.js";
import { parseStrictYaml } from "./strict-yaml.js";

/** Skill-level execution settings from SKILL.md, inherited by runners that do not set them. */
export interface SkillSettings {
  auth?: JsonValue;
  risk?: JsonValue;
  runtime?: JsonValue;
  retry?: RetryPolicy;
  idempotency?: IdempotencyDeclaration;
  /** Precedence: frontmatter `mutating`, then `risk.mutating`, then `runx.mutating`. */
  mutating?: boolean;
  artifacts?: JsonObject;
  allowed_tools?: string[];
  execution?: JsonObject;
  runx?: JsonObject;
}

/** A parsed skill package. */
export interface SkillPackage {
  name: string;
  description?: string;
  category?: string;
  /** Every frontmatter key as written. */
  frontmatter: JsonObject;
  /** The operator manual (markdown after the frontmatter). */
  body: string;
  qualityProfile?: string;
  /** The X.yaml profile; absent for SKILL.md-only packages. */
  profile?: ExecutionProfile;
  /** Runners in declaration order; a SKILL.md-only package has one implicit runner "default". */
  runners: Record<string, RunnerDefinition>;
  /** Package-level inputs declared in SKILL.md frontmatter. */
  inputs: Record<string, InputDeclaration>;
  settings: SkillSettings;
  /** File names used in error details. */
  files: { skillMd?: string; profile?: string };
}

/** One source text and the file name to report in errors. */
export interface SourceText {
  text: string;
  file?: string;
}

/** Inputs for {@link buildSkillPackage}. */
export interface BuildSkillPackageInput {
  skillMd: SourceText;
  profile?: SourceText;
  /**
   * The profile is an execution profile owned by an ancestor package (an `X.yaml` in a
   * directory without its own SKILL.md, e.g. `graph/plan/X.yaml`): `skillMd` is the owner's
   * manual, the profile may name a skill of its own, and that name is the package's.
   */
  ownedProfile?: boolean;
}

/** Name of the runner synthesized from frontmatter when a package has no X.yaml. */
export const IMPLICIT_RUNNER_NAME = "default";

function settingsOf(frontmatter: JsonObject): SkillSettings {
  const runx = isJsonObject(frontmatter.runx) ? frontmatter.runx : {};
  const pick = (key: string): JsonValue | undefined => frontmatter[key] ?? runx[key];
  const settings: SkillSettings = {};
  for (const key of ["auth", "risk", "runtime"] as const)
    if (frontmatter[key] !== undefined) settings[key] = frontmatter[key];
  const retry = retryOf(pick("retry"));
  if (retry !== undefined) settings.retry = retry;
  const idempotency = idempotencyOf(pick("idempotency"));
  if (idempotency !== undefined) settings.idempotency = idempotency;
  const risk = isJsonObject(frontmatter.risk) ? frontmatter.risk : {};
  const mutating = [frontmatter.mutating, risk.mutating, runx.mutating].find(
    (v) => typeof v === "boolean",
  );
  if (typeof mutating === "boolean") settings.mutating = mutating;
  const artifacts = pick("artifacts");
  if (isJsonObject(artifacts)) settings.artifacts = artifacts;
  const tools = pick("allowed_tools");
  if (Array.isArray(tools))
    settings.allowed_tools = tools.filter((t): t is string => typeof t === "string");
  const execution = pick("execution");
  if (isJsonObject(execution)) settings.execution = execution;
  if (isJsonObject(frontmatter.runx)) settings.runx = frontmatter.runx;
  return settings;
}

/**
 * Combines SKILL.md and an optional X.yaml. Throws the parsers' errors, and PROFILE_INVALID
 * when X.yaml `skill` differs from the SKILL.md `name` (unless the profile is an owned one).
 */
export function buildSkillPackage(input: BuildSkillPackageInput): SkillPackage {
  const skillFile = input.skillMd.file;
  const { skill, document: skillDoc } = parseSkillMarkdownDocument(input.skillMd.text, {
    file: skillFile,
  });
  const failFrontmatter: FailAt = failIn(skillDoc, "FRONTMATTER_INVALID", skillFile);
  const inputs = normalizeInputDeclarations(skill.frontmatter.inputs, ["inputs"], failFrontmatter);

  let profile: ExecutionProfile | undefined;
  let runners: Record<string, RunnerDefinition>;
  if (input.profile !== undefined) {
    const profileFile = input.profile.file;
    const document = parseStrictYaml(input.profile.text, { file: profileFile });
    profile = buildExecutionProfile(document, { file: profileFile });
    if (
      profile.skill !== undefined &&
      profile.skill !== skill.name &&
      input.ownedProfile !== true
    ) {
      failIn(
        document,
        "PROFILE_INVALID",
        profileFile,
      )(["skill"], `X.yaml skill "${profile.skill}" does not match SKILL.md name "${skill.name}"`);
    }
    runners = profile.runners;
  } else {
    // Legacy (TS-era) packages: one implicit runner built from frontmatter `source`.
    const source = isJsonObject(skill.frontmatter.source)
      ? skill.frontmatter.source
      : { type: "agent" };
    const runner = normalizeRunner(
      IMPLICIT_RUNNER_NAME,
      { source, default: true },
      {
        path: [],
        fail: failFrontmatter,
        implicit: true,
      },
    );
    runners = { [IMPLICIT_RUNNER_NAME]: runner };
  }

  const pkg: SkillPackage = {
    name: input.ownedProfile === true ? (profile?.skill ?? skill.name) : skill.name,
    frontmatter: skill.frontmatter,
    body: skill.body,
    runners,
    inputs,
    settings: settingsOf(skill.frontmatter),
    files: { skillMd: skillFile, profile: input.profile?.file },
  };
  if (skill.description !== undefined) pkg.description = skill.description;
  if (skill.category !== undefined) pkg.category = skill.category;
  if (skill.qualityProfile !== undefined) pkg.qualityProfile = skill.qualityProfile;
  if (profile !== undefined) pkg.profile = profile;
  return pkg;
}
