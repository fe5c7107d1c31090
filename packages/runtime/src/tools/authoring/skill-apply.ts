/**
 * `runx.skill.apply`: applies one digest-bound change bundle from runx.skill.bind to a package,
 * as the named `apply_result` packet (runx.skill.apply_result.v1). The pipeline:
 *
 *   resolve target → admit contract and paths (apply-admission.ts) → non-write decision:
 *   report `unchanged` / `needs_core`, write nothing → same bundle already applied (effect
 *   ledger): report `unchanged` → stale base digest: refuse → stage the candidate beside the
 *   target, check budget, load, harness → candidate identical to the package: report
 *   `unchanged`, write nothing → target still at its base digest → one all-or-nothing
 *   transaction (fs/transaction.ts) → record in the effect ledger.
 *
 * Every refusal happens before the transaction, so a refused apply leaves the workspace as it
 * was (the stage is removed in `finally`). Writes go through the shared containment and
 * runx-state checks, so nothing lands outside `repo_root` or inside `.runx/`.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import inputSchema from "../../../schemas/tools/authoring/runx-skill-apply.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/authoring/runx-skill-apply.output.schema.json" with { type: "json" };
import { isRuntimeError } from "../../errors.js";
import { validateToolsAuthoringRunxSkillApplyInput } from "../../generated/validate-tools-authoring-runx-skill-apply.input.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { applyTransaction, planTransaction } from "../fs/transaction.js";
import type { TransactionPlan } from "../fs/transaction.js";
import { withNamedOutput } from "../packet.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";
import { refuse } from "./architecture.js";
import { admitBudget, admitChangeContract, admitChanges } from "./apply-admission.js";
import type { AdmittedChange } from "./apply-admission.js";
import { loadCandidate, resourceUsage, runCandidateHarness } from "./candidate.js";
import type { ChangeBundle } from "./change-shape.js";
import type { AuthoringMode } from "./content-rules.js";
import { metricsDelta, packageMetrics, packageSnapshot } from "./snapshot.js";
import type { PackageSnapshot } from "./snapshot.js";
import { createStage, stageFiles, unstageFiles } from "./stage.js";
import { authoringRoot, resolveTarget } from "./target.js";
import type { PackageTarget } from "./target.js";

const TOOL = "runx.skill.apply";
const PASS_THROUGH = new Set([
  "INPUT_INVALID",
  "INTERRUPTED",
  "IO_ERROR",
  "INTERNAL",
  "LIMIT_EXCEEDED",
]);

interface ApplyInput {
  repo_root?: string;
  target_dir: string;
  mode?: AuthoringMode;
  change_bundle: ChangeBundle;
}

function result(
  target: PackageTarget,
  bundle: ChangeBundle,
  fields: { verdict: string; package_digest: string; validation?: JsonRecord },
): JsonRecord {
  const applied = fields.verdict === "validated_and_applied";
  const out: JsonRecord = {
    schema: "runx.skill.apply_result.v1",
    target_dir: target.relative,
    decision: bundle.decision,
    verdict: fields.verdict,
    base_digest: bundle.base_digest,
    plan_digest: bundle.plan_digest,
    package_digest: fields.package_digest,
    changed_paths: applied ? bundle.writes.map((w) => w.path) : [],
    deleted_paths: applied ? bundle.deletes : [],
    residual_risks: [],
  };
  if (fields.validation !== undefined) out.validation = fields.validation;
  return out;
}

/**
 * The effect-ledger key of one bundle: its plan digest and its own digest, so two bundles
 * under one plan never collide (a collision would fail the call after the files landed).
 */
function ledgerKey(bundle: ChangeBundle): string {
  return `${TOOL}:${bundle.plan_digest}:${hashCanonical(bundle)}`;
}

/** The recorded result when this exact bundle was applied and the package is still its output. */
async function reapplied(
  ctx: ToolContext,
  target: PackageTarget,
  bundle: ChangeBundle,
  before: PackageSnapshot,
): Promise<JsonRecord | undefined> {
  const entry = await ctx.effects.lookup(ledgerKey(bundle));
  if (entry === undefined || entry.request_digest !== hashCanonical(bundle)) return undefined;
  const recorded = entry.output;
  if (recorded.target_dir !== target.relative || recorded.package_digest !== before.digest) {
    return undefined;
  }
  const validation = recorded.validation;
  return result(target, bundle, {
    verdict: "unchanged",
    package_digest: before.digest,
    ...(typeof validation === "object" && validation !== null && !Array.isArray(validation)
      ? { validation }
      : {}),
  });
}

function checks(harnessStatus: string): JsonRecord[] {
  const passed = (name: string, detail: string): JsonRecord => ({ name, status: "passed", detail });
  return [
    passed("package_contract", "the candidate package loads and validates"),
    passed("package_inspection", "package inspection passed"),
    passed(
      "focused_harness",
      harnessStatus === "passed"
        ? "focused package harness passed"
        : "focused package harness completed without failure",
    ),
    passed(
      "resource_budget",
      "declared file, executable-line, fan-out, process, network and domain-module budgets passed",
    ),
  ];
}

/** Stages the changed package, checks it and returns its validation result. */
async function validateCandidate(
  ctx: ToolContext,
  target: PackageTarget,
  bundle: ChangeBundle,
  change: AdmittedChange,
  before: PackageSnapshot,
): Promise<{ validation: JsonRecord; digest: string }> {
  const parent = dirname(target.absolute);
  // Beside the target, so the candidate's relative references resolve as the package's will;
  // in the run directory when the parent does not exist yet (creating it would be a write).
  const besideTarget = await stat(parent).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!besideTarget) await mkdir(ctx.runDir, { recursive: true });
  const stage = await createStage(besideTarget ? parent : ctx.runDir, "candidate");
  try {
    await stageFiles(stage, before.files);
    await unstageFiles(stage, change.deletes);
    await stageFiles(
      stage,
      change.writes.map((w) => ({ path: w.path, contents: Buffer.from(w.contents, "utf8") })),
    );
    const candidate = await packageSnapshot(stage.dir, "change_bundle.writes");
    const after = packageMetrics(candidate.files);
    let harness: JsonRecord;
    try {
      const pkg = await loadCandidate(ctx, stage.dir);
      admitBudget(bundle.architecture, after, resourceUsage(pkg));
      harness = await runCandidateHarness(ctx, stage.dir, "change_bundle.writes");
    } catch (error) {
      // A package that does not load is a bad bundle; an interruption or I/O fault is not.
      if (!isRuntimeError(error) || PASS_THROUGH.has(error.code)) throw error;
      throw refuse(
        TOOL,
        "change_bundle.writes",
        `candidate package is invalid: ${error.code}: ${error.message}`,
      );
    }
    const beforeMetrics = packageMetrics(before.files);
    const validation: JsonRecord = {
      schema: "runx.skill.validation_result.v1",
      target_dir: target.relative,
      base_digest: before.digest,
      plan_digest: bundle.plan_digest,
      candidate_digest: candidate.digest,
      checks: checks(harness.status === "passed" ? "passed" : "other"),
      before: beforeMetrics,
      after,
      delta: metricsDelta(beforeMetrics, after),
      residual_risks: [],
    };
    return { validation, digest: candidate.digest };
  } finally {
    await stage.remove();
  }
}

async function planChange(target: PackageTarget, change: AdmittedChange): Promise<TransactionPlan> {
  const prefix = `${target.relative}/`;
  return planTransaction(target.root, {
    writes: change.writes.map((w) => ({ path: prefix + w.path, contents: w.contents })),
    deletes: change.deletes.map((d) => prefix + d),
    writeField: (i) => `change_bundle.writes[${i}].path`,
  });
}

async function applyChange(ctx: ToolContext, input: ApplyInput): Promise<JsonRecord> {
  const mode = input.mode ?? "build";
  const bundle = input.change_bundle;
  const root = await authoringRoot(ctx, input.repo_root);
  const target = await resolveTarget(root, input.target_dir);
  const before = await packageSnapshot(target.absolute, "target_dir");
  admitChangeContract(bundle, mode, before.digest);
  const change = admitChanges(bundle, mode, new Set(before.files.map((f) => f.path)));
  if (bundle.decision !== "write") {
    const verdict = bundle.decision === "needs_core" ? "needs_core" : "unchanged";
    return result(target, bundle, { verdict, package_digest: before.digest });
  }
  if (before.digest !== bundle.base_digest) {
    const again = await reapplied(ctx, target, bundle, before);
    if (again !== undefined) return again;
    throw refuse(
      TOOL,
      "change_bundle.base_digest",
      "target package changed since inspection; inspect and author against the current base digest",
    );
  }
  const plan = await planChange(target, change);
  const { validation, digest } = await validateCandidate(ctx, target, bundle, change, before);
  if ((await packageSnapshot(target.absolute, "target_dir")).digest !== before.digest) {
    throw refuse(
      TOOL,
      "change_bundle.base_digest",
      "target package changed during validation; inspect and retry against the current files",
    );
  }
  if (digest === before.digest) {
    // The bundle rewrites the package into exactly what it is: nothing to write.
    return result(target, bundle, {
      verdict: "unchanged",
      package_digest: before.digest,
      validation,
    });
  }
  await applyTransaction(plan);
  const applied = await packageSnapshot(target.absolute, "target_dir");
  const out = result(target, bundle, {
    verdict: "validated_and_applied",
    package_digest: applied.digest,
    validation,
  });
  if (applied.digest !== digest) {
    out.residual_risks = ["the applied package digest differs from the validated candidate"];
  }
  await ctx.effects.record(ledgerKey(bundle), {
    request_digest: hashCanonical(bundle),
    output: out,
  });
  return out;
}

/** The `runx.skill.apply` tool. */
export const skillApplyTool: NativeTool = withNamedOutput(
  defineTool<ApplyInput, JsonRecord>({
    name: TOOL,
    description: "Transactionally apply one validated, bounded skill change bundle.",
    mutating: true,
    scopes: ["fs.write", "fs.delete"],
    inputSchema,
    outputSchema,
    validate: validateToolsAuthoringRunxSkillApplyInput,
    async run(input, ctx) {
      const out = await applyChange(ctx, input);
      const verdict = typeof out.verdict === "string" ? out.verdict : "";
      return { output: out, summary: `${input.target_dir}: ${verdict}` };
    },
  }),
  { name: "apply_result", packet: "runx.skill.apply_result.v1" },
);
