/**
 * Runner selection, apart from the parsers so that a run whose package comes from the
 * parse cache never loads the YAML parser. Pure.
 */
import { RuntimeError } from "../errors.js";
import type { SkillPackage, SkillSettings } from "./package.js";
import type { RunnerDefinition } from "./runners.js";

const INHERITED: ReadonlyArray<keyof SkillSettings> = [
  "auth",
  "risk",
  "runtime",
  "retry",
  "idempotency",
  "mutating",
  "artifacts",
  "allowed_tools",
  "execution",
  "runx",
];

/** Applies the legacy merge rule: skill inputs overlaid by runner inputs; runner settings win. */
function mergeWithSkill(pkg: SkillPackage, runner: RunnerDefinition): RunnerDefinition {
  const merged: RunnerDefinition = { ...runner, inputs: { ...pkg.inputs, ...runner.inputs } };
  const target: SkillSettings = merged;
  const inherit = <K extends keyof SkillSettings>(key: K): void => {
    const value = pkg.settings[key];
    if (target[key] === undefined && value !== undefined) target[key] = value;
  };
  INHERITED.forEach(inherit);
  return merged;
}

/**
 * Selects a runner: the named one (RUNNER_NOT_FOUND if undeclared), else the single
 * `default: true` runner, else the only runner; otherwise RUNNER_AMBIGUOUS. A SKILL.md-only
 * package has exactly one implicit runner, which makes the TS-era frontmatter fallback work.
 * The result has the skill-level settings merged in.
 */
export function selectRunner(pkg: SkillPackage, requested?: string): RunnerDefinition {
  const all = Object.values(pkg.runners);
  const available = Object.keys(pkg.runners);
  const file = pkg.files.profile ?? pkg.files.skillMd;
  if (requested !== undefined) {
    const runner = pkg.runners[requested];
    if (runner === undefined) {
      throw new RuntimeError("RUNNER_NOT_FOUND", `runner ${requested} is not declared`, {
        file,
        runner: requested,
        available,
      });
    }
    return mergeWithSkill(pkg, runner);
  }
  const defaults = all.filter((runner) => runner.default);
  if (defaults.length > 1) {
    throw new RuntimeError(
      "RUNNER_AMBIGUOUS",
      "the runner manifest declares multiple default runners",
      { file, available },
    );
  }
  const chosen = defaults[0] ?? (all.length === 1 ? all[0] : undefined);
  if (chosen !== undefined) return mergeWithSkill(pkg, chosen);
  if (all.length === 0)
    throw new RuntimeError("RUNNER_NOT_FOUND", "the package declares no runners", {
      file,
      available,
    });
  throw new RuntimeError(
    "RUNNER_AMBIGUOUS",
    "the runner manifest has no default runner; name one explicitly",
    {
      file,
      available,
    },
  );
}
