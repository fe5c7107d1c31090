/**
 * The authoring tools through the built CLI: a graph skill whose steps call
 * runx.skill.inspect → plan → bind → apply (the skill-lab build lane without its agent steps,
 * the decision and draft supplied as inputs), and a read-only graph calling inspect and
 * validate under `runx harness`.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";
import { decision, draft, notePackage } from "./decisions.test-kit.js";

const LAB_MANUAL =
  "---\nname: lab\ndescription: Build one skill package from a decision.\n---\n\n# lab\n";

const LAB_PROFILE = `skill: lab
runners:
  build:
    default: true
    type: graph
    inputs:
      target_dir: { type: string, required: true }
      architecture: { type: object, required: true }
      change_draft: { type: object, required: true }
    graph:
      name: lab-build
      result_from: [apply]
      steps:
        - id: inspect
          tool: runx.skill.inspect
          scopes: [fs.read]
          inputs:
            target_dir: $input.target_dir
        - id: plan
          tool: runx.skill.plan
          inputs:
            architecture: $input.architecture
          context:
            base_digest: inspect.authoring_context.data.base_digest
        - id: bind
          tool: runx.skill.bind
          inputs:
            change_draft: $input.change_draft
          context:
            architecture_plan: plan.architecture_plan.data
        - id: apply
          tool: runx.skill.apply
          scopes: [fs.write, fs.delete]
          mutation: true
          inputs:
            target_dir: $input.target_dir
            mode: build
          context:
            change_bundle: bind.change_bundle.data
`;

// The harness runs the package in an isolated copy, so the candidate travels as input.
const CHECK_PROFILE = `skill: check
catalog:
  execution: read
harness:
  cases:
    - name: checks-an-inline-candidate
      inputs:
        candidate: ${JSON.stringify(notePackage())}
      expect: { status: sealed }
runners:
  default:
    default: true
    type: graph
    inputs:
      candidate: { type: array, required: true }
    graph:
      name: check
      result_from: [validate]
      steps:
        - id: inspect
          tool: runx.skill.inspect
          scopes: [fs.read]
        - id: validate
          tool: runx.skill.validate
          scopes: [fs.read]
          inputs:
            candidate_files: $input.candidate
`;

/** The skill-lab design lane: an agent decides, runx.skill.plan admits and binds. */
const DESIGN_PROFILE = (answer: unknown): string => `skill: design
harness:
  cases:
    - name: designs-a-bounded-package
      inputs: { objective: Add a note digest skill }
      caller:
        answers:
          agent_task.design-architecture.output:
            architecture_decision: ${JSON.stringify(answer)}
      expect:
        status: sealed
        steps: [inspect, architect, plan]
runners:
  default:
    default: true
    type: graph
    inputs:
      objective: { type: string, required: true }
    graph:
      name: design
      result_from: [plan]
      steps:
        - id: inspect
          tool: runx.skill.inspect
          scopes: [fs.read]
          inputs:
            repo_root: .
        - id: architect
          run:
            type: agent-task
            agent: builder
            task: design-architecture
            outputs:
              architecture_decision: object
          context:
            authoring_context: inspect.authoring_context.data
          inputs:
            objective: $input.objective
          artifacts:
            named_emits:
              architecture_decision: architecture_decision
            packets:
              architecture_decision: runx.skill.architecture_decision.v1
        - id: plan
          tool: runx.skill.plan
          context:
            base_digest: inspect.authoring_context.data.base_digest
            architecture: architect.architecture_decision.data
`;

describe("authoring tools through the CLI", () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace("runx-authoring-");
  });
  afterEach(() => ws.cleanup());

  it("lists and inspects all five tools with their contracts", async () => {
    const list = await runx(ws, ["tool", "list", "--json"]);
    expect(list.code).toBe(0);
    for (const name of ["inspect", "plan", "bind", "validate", "apply"]) {
      expect(list.stdout).toContain(`runx.skill.${name}`);
    }
    const apply = await runx(ws, ["tool", "inspect", "runx.skill.apply", "--json"]);
    expect(apply.json()).toMatchObject({
      tool: { name: "runx.skill.apply", mutating: true, scopes: ["fs.write", "fs.delete"] },
    });
    expect(apply.stdout).toContain("runx.skill.apply_result.v1");
    const search = await runx(ws, ["tool", "search", "runx.skill", "--json"]);
    expect(search.code).toBe(0);
    for (const name of ["inspect", "plan", "bind", "validate", "apply"]) {
      expect(search.stdout).toContain(`"native:runx.skill.${name}"`);
    }
  });

  it("plans an agent's decision in the skill-lab design lane under runx harness", async () => {
    ws.write(
      "skills/design/SKILL.md",
      "---\nname: design\ndescription: Design one package.\n---\n",
    );
    ws.write("skills/design/X.yaml", DESIGN_PROFILE(decision()));
    const h = await runx(ws, ["harness", "skills/design", "--json"]);
    expect(h.code, h.stdout + h.stderr).toBe(0);
    expect(h.json()).toMatchObject({ status: "passed", case_count: 1, graph_case_count: 1 });
    const bad = decision();
    delete bad.chain_use;
    ws.write("skills/design/X.yaml", DESIGN_PROFILE(bad));
    const refused = await runx(ws, ["harness", "skills/design", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("public architectures require a chain_use contract");
  });

  it("builds a package through inspect, plan, bind and apply in one sealed graph run", async () => {
    ws.write("skills/lab/SKILL.md", LAB_MANUAL);
    ws.write("skills/lab/X.yaml", LAB_PROFILE);
    ws.write(
      "in.json",
      JSON.stringify({
        target_dir: "skills/digest-note",
        architecture: decision(),
        change_draft: draft(),
      }),
    );
    const r = await runx(ws, ["skill", "skills/lab", "--inputs", "in.json", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: "sealed", outcome: "completed" });
    expect(r.stdout).toContain('"verdict":"validated_and_applied"');
    for (const file of notePackage()) {
      expect(ws.read(`skills/digest-note/${file.path}`)).toBe(file.contents);
    }
    // The same run again: inspect now reports the built package, and a bundle that rewrites
    // it into exactly itself changes nothing.
    const stamp = statSync(join(ws.root, "skills/digest-note/X.yaml")).mtimeMs;
    const again = await runx(ws, ["skill", "skills/lab", "--inputs", "in.json", "--json"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('"verdict":"unchanged"');
    expect(statSync(join(ws.root, "skills/digest-note/X.yaml")).mtimeMs).toBe(stamp);
  });

  it("fails the run naming the field, and writes nothing, for a write outside the package", async () => {
    ws.write("skills/lab/SKILL.md", LAB_MANUAL);
    ws.write("skills/lab/X.yaml", LAB_PROFILE);
    const d = draft();
    (d.writes as unknown[]).push({ path: "../../escape.md", contents: "x" });
    ws.write(
      "in.json",
      JSON.stringify({
        target_dir: "skills/digest-note",
        architecture: decision(),
        change_draft: d,
      }),
    );
    const before = ws.files("skills");
    const r = await runx(ws, ["skill", "skills/lab", "--inputs", "in.json", "--json"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("PATH_ESCAPE");
    expect(r.stdout).toContain("change_bundle.writes[2].path");
    expect(r.stdout + r.stderr).not.toContain("    at ");
    expect(ws.files("skills")).toEqual(before);
  });

  it("runs a read-only inspect and validate graph under runx harness", async () => {
    for (const file of notePackage()) ws.write(`skills/digest-note/${file.path}`, file.contents);
    ws.write("skills/check/SKILL.md", "---\nname: check\ndescription: Check one package.\n---\n");
    ws.write("skills/check/X.yaml", CHECK_PROFILE);
    const h = await runx(ws, ["harness", "skills/check", "--json"]);
    expect(h.code, h.stdout + h.stderr).toBe(0);
    expect(h.json()).toMatchObject({ status: "passed", case_count: 1 });
    ws.write("in.json", JSON.stringify({ candidate: notePackage() }));
    const s = await runx(ws, ["skill", "skills/check", "--inputs", "in.json", "--json"]);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    expect(s.stdout).toContain('"verdict":"tested"');
  });
});
