import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsAuthoringRunxSkillApplyOutput } from "../../generated/validate-tools-authoring-runx-skill-apply.output.js";
import type { JsonRecord, ToolContext, ToolResult } from "../types.js";
import {
  failureCode,
  makeLayoutContext,
  snapshotTree,
  successData,
  type TestWorkspace,
} from "../../testing/tool-context.js";
import { skillApplyTool } from "./skill-apply.js";
import { skillBindTool } from "./skill-bind.js";
import { skillInspectTool } from "./skill-inspect.js";
import { skillPlanTool } from "./skill-plan.js";
import { decision, draft, noSkillDecision, notePackage } from "./decisions.test-kit.js";

const TARGET = "skills/digest-note";

type Mutate = (value: Record<string, unknown>) => void;

describe("runx.skill.apply", () => {
  let layout: TestWorkspace;
  let ctx: ToolContext;
  beforeEach(() => {
    ({ layout, ctx } = makeLayoutContext());
  });
  afterEach(() => layout.cleanup());

  const call = (tool: typeof skillApplyTool, input: Record<string, unknown>): Promise<ToolResult> =>
    tool.execute(input as JsonRecord, ctx);

  /** inspect → plan → bind, as a skill-lab graph runs them. */
  async function bundleFor(
    opts: { architecture?: Record<string, unknown>; draft?: Record<string, unknown> } = {},
  ): Promise<JsonRecord> {
    const context = successData(await call(skillInspectTool, { target_dir: TARGET }));
    const plan = successData(
      await call(skillPlanTool, {
        base_digest: context.base_digest,
        architecture: opts.architecture ?? decision(),
      }),
    );
    return successData(
      await call(skillBindTool, { architecture_plan: plan, change_draft: opts.draft ?? draft() }),
    );
  }

  const apply = (bundle: JsonRecord, extra: Record<string, unknown> = {}) =>
    call(skillApplyTool, { target_dir: TARGET, change_bundle: bundle, ...extra });

  it("validates the candidate with its own harness and applies it in one transaction", async () => {
    const bundle = await bundleFor();
    const result = successData(await apply(bundle));
    expect(validateToolsAuthoringRunxSkillApplyOutput(result)).toBe(true);
    expect(result).toMatchObject({
      schema: "runx.skill.apply_result.v1",
      target_dir: TARGET,
      decision: "write",
      verdict: "validated_and_applied",
      base_digest: bundle.base_digest,
      plan_digest: bundle.plan_digest,
      changed_paths: ["SKILL.md", "X.yaml"],
      deleted_paths: [],
      residual_risks: [],
      validation: { schema: "runx.skill.validation_result.v1", before: { files: 0 } },
    });
    const validation = result.validation as Record<string, unknown>;
    expect(validation.after).toMatchObject({ files: 2, executable_lines: 0 });
    expect((validation.checks as Array<{ name: string }>).map((c) => c.name)).toEqual([
      "package_contract",
      "package_inspection",
      "focused_harness",
      "resource_budget",
    ]);
    for (const file of notePackage()) {
      expect(readFileSync(join(layout.workspace, TARGET, file.path), "utf8")).toBe(file.contents);
    }
    const after = successData(await call(skillInspectTool, { target_dir: TARGET }));
    expect(after.base_digest).toBe(result.package_digest);
    expect(validation.candidate_digest).toBe(result.package_digest);
  });

  it("reports an already-applied bundle unchanged and writes nothing", async () => {
    const bundle = await bundleFor();
    successData(await apply(bundle));
    const before = snapshotTree(layout.workspace);
    const again = successData(await apply(bundle));
    expect(again).toMatchObject({ verdict: "unchanged", changed_paths: [], deleted_paths: [] });
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  it("reports a bundle that rewrites the package into itself unchanged and writes nothing", async () => {
    successData(await apply(await bundleFor()));
    const same = await bundleFor();
    const before = snapshotTree(layout.workspace);
    const result = successData(await apply(same));
    expect(result).toMatchObject({ verdict: "unchanged", changed_paths: [] });
    expect(result.validation).toMatchObject({ delta: { files: 0, bytes: 0 } });
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  it("reports no_skill unchanged and needs_core as needs_core, writing nothing", async () => {
    const before = snapshotTree(layout.workspace);
    const noSkill = await bundleFor({
      architecture: noSkillDecision(),
      draft: { ...draft(), decision: "no_skill", writes: [] },
    });
    expect(successData(await apply(noSkill))).toMatchObject({
      decision: "no_skill",
      verdict: "unchanged",
    });
    const core = noSkillDecision();
    core.disposition = "needs_core";
    (core.native_reuse as Record<string, unknown>).missing_capabilities = ["notes.summarize"];
    const needsCore = await bundleFor({
      architecture: core,
      draft: { ...draft(), decision: "needs_core", writes: [] },
    });
    const result = successData(await apply(needsCore));
    expect(result).toMatchObject({ decision: "needs_core", verdict: "needs_core" });
    expect(result.validation).toBeUndefined();
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  /** An extend_existing decision over the built package (identity kept). */
  const extendDecision = (deletions: string[] = []): Record<string, unknown> => {
    const d = decision();
    d.disposition = "extend_existing";
    Object.assign(d.identity as object, { action: "keep", current_name: "digest-note" });
    (d.resource_budget as Record<string, unknown>).max_files = 4;
    d.deletions = deletions;
    return d;
  };

  it("improves an existing package: edits its README, deletes a planned file, keeps the rest", async () => {
    successData(await apply(await bundleFor()));
    writeFileSync(join(layout.workspace, TARGET, "README.md"), "# old\n");
    writeFileSync(join(layout.workspace, TARGET, "notes.md"), "stale\n");
    const bundle = await bundleFor({
      architecture: extendDecision(["notes.md"]),
      draft: {
        ...draft(),
        writes: [{ path: "README.md", contents: "# digest-note\n" }],
        deletes: ["notes.md"],
      },
    });
    const result = successData(await apply(bundle, { mode: "improve" }));
    expect(result).toMatchObject({
      verdict: "validated_and_applied",
      changed_paths: ["README.md"],
      deleted_paths: ["notes.md"],
    });
    expect(readFileSync(join(layout.workspace, TARGET, "README.md"), "utf8")).toBe(
      "# digest-note\n",
    );
    expect(snapshotTree(layout.workspace)).not.toHaveProperty(`${TARGET}/notes.md`);
    expect(snapshotTree(layout.workspace)).toHaveProperty(`${TARGET}/SKILL.md`);
  });

  it("adds a fixture in harness mode and reports a current no_change unchanged", async () => {
    successData(await apply(await bundleFor()));
    const fixture = "name: digests-again\ninputs: { note: again }\nexpect: { status: sealed }\n";
    const bundle = await bundleFor({
      architecture: extendDecision(),
      draft: { ...draft(), writes: [{ path: "fixtures/again.yaml", contents: fixture }] },
    });
    expect(successData(await apply(bundle, { mode: "harness" }))).toMatchObject({
      verdict: "validated_and_applied",
      validation: { after: { files: 3, test_lines: 3 } },
    });
    const noChange = await bundleFor({
      architecture: extendDecision(),
      draft: { ...draft(), decision: "no_change", writes: [] },
    });
    const before = snapshotTree(layout.workspace);
    expect(successData(await apply(noChange, { mode: "improve" }))).toMatchObject({
      decision: "no_change",
      verdict: "unchanged",
    });
    writeFileSync(join(layout.workspace, TARGET, "extra.md"), "moved\n");
    const stale = await apply(noChange, { mode: "improve" });
    expect(failureCode(stale)).toBe("INPUT_INVALID");
    expect(stale).toMatchObject({ output: { details: { path: "change_bundle.base_digest" } } });
    expect(before).not.toHaveProperty(`${TARGET}/extra.md`);
  });

  const refusals: Array<{
    what: string;
    code: string;
    path: string;
    draft?: Mutate;
    architecture?: Mutate;
    bundle?: Mutate;
    input?: Record<string, unknown>;
    before?: () => void;
  }> = [
    {
      what: "a package changed after inspection",
      code: "INPUT_INVALID",
      path: "change_bundle.base_digest",
      before: () => {
        mkdirSync(join(layout.workspace, TARGET), { recursive: true });
        writeFileSync(join(layout.workspace, TARGET, "notes.md"), "moved\n");
      },
    },
    {
      what: "a plan edited after binding",
      code: "INPUT_INVALID",
      path: "change_bundle.plan_digest",
      bundle: (b) => ((b.architecture as Record<string, unknown>).objective = "Other."),
    },
    {
      what: "a write that climbs out of the package",
      code: "PATH_ESCAPE",
      path: "change_bundle.writes[2].path",
      draft: (d) => (d.writes as unknown[]).push({ path: "../escape.md", contents: "x" }),
    },
    {
      what: "a target outside the workspace",
      code: "PATH_ESCAPE",
      path: "target_dir",
      input: { target_dir: "../outside/pkg" },
    },
    {
      what: "a target inside runx's own state",
      code: "POLICY_DENIED",
      path: "target_dir",
      input: { target_dir: ".runx/pkg" },
    },
    {
      what: "an auxiliary README in build mode",
      code: "POLICY_DENIED",
      path: "change_bundle.writes[2].path",
      draft: (d) => (d.writes as unknown[]).push({ path: "README.md", contents: "# x\n" }),
    },
    {
      what: "a non-fixture write in harness mode",
      code: "POLICY_DENIED",
      path: "change_bundle.writes[0].path",
      input: { mode: "harness" },
    },
    {
      what: "secret-like material",
      code: "POLICY_DENIED",
      path: "change_bundle.writes[2].contents",
      draft: (d) =>
        (d.writes as unknown[]).push({ path: "notes.txt", contents: `${"nskey"}_live_abc123` }),
    },
    {
      what: "a decision the mode does not allow",
      code: "INPUT_INVALID",
      path: "mode",
      input: { mode: "harness" },
      architecture: (a) => {
        for (const key of Object.keys(a)) delete a[key];
        Object.assign(a, noSkillDecision());
      },
      draft: (d) => Object.assign(d, { decision: "no_skill", writes: [] }),
    },
    {
      what: "a candidate over its file budget",
      code: "INPUT_INVALID",
      path: "change_bundle.architecture.resource_budget.max_files",
      architecture: (a) => ((a.resource_budget as Record<string, unknown>).max_files = 1),
    },
    {
      what: "a candidate using the network without budget",
      code: "INPUT_INVALID",
      path: "change_bundle.architecture.resource_budget.network_allowed",
      draft: (d) =>
        ((d.writes as Array<{ contents: string }>)[1]!.contents =
          notePackage()[1]!.contents.replace("tool: data.digest", "tool: http.read")),
    },
    {
      what: "a candidate whose harness fails",
      code: "INPUT_INVALID",
      path: "change_bundle.writes",
      draft: (d) =>
        ((d.writes as Array<{ contents: string }>)[1]!.contents =
          notePackage()[1]!.contents.replace("status: sealed", "status: failure")),
    },
    {
      what: "a candidate that does not load",
      code: "INPUT_INVALID",
      path: "change_bundle.writes",
      draft: (d) => ((d.writes as Array<{ contents: string }>)[1]!.contents = "runners: [\n"),
    },
    {
      what: "a missing target_dir",
      code: "INPUT_INVALID",
      path: "target_dir",
      input: { target_dir: undefined },
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.what} (${r.code} at ${r.path}) and leaves the tree byte-identical`, async () => {
      const architecture = decision();
      r.architecture?.(architecture);
      const d = draft();
      r.draft?.(d);
      const bundle = await bundleFor({ architecture, draft: d });
      r.bundle?.(bundle);
      r.before?.();
      const before = snapshotTree(layout.workspace);
      const input: Record<string, unknown> = {
        target_dir: TARGET,
        change_bundle: bundle,
        ...r.input,
      };
      if ("target_dir" in (r.input ?? {}) && r.input?.target_dir === undefined)
        delete input.target_dir;
      const result = await call(skillApplyTool, input);
      expect(failureCode(result), JSON.stringify(result)).toBe(r.code);
      expect(result).toMatchObject({ output: { details: { path: r.path } } });
      expect(JSON.stringify(result)).not.toContain("abc123");
      expect(snapshotTree(layout.workspace)).toEqual(before);
    });
  }
});
