/**
 * `runx new <name> --objective …` through the built CLI: it runs the bundled skill-lab build
 * graph. With a managed agent configured (the loopback OpenAI-compatible server) the agent's
 * two acts propose the package and the native authoring tools write it; without one the run
 * pauses needs_agent and `runx resume` carries it through to the same package.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { makeWorkspace, REPO_ROOT, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { answerReply, configureManagedAgent, startModelServer } from "../testing/model-server.js";
import type { ModelServer } from "../testing/model-server.js";
import { decision, draft, notePackage } from "../tools/authoring/decisions.test-kit.js";

interface Envelope {
  status: string;
  outcome: string;
  run_id: string;
  skill_name: string;
  runner: string;
  requests: Array<{ id: string; kind: string }>;
}

const OBJECTIVE = "Give an operator one stable digest for a note";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-new-lab-");
});
afterEach(() => ws.cleanup());

function expectNotePackage(): void {
  for (const file of notePackage()) {
    expect(ws.read(`digest-note/${file.path}`)).toBe(file.contents);
  }
}

describe("runx new with an objective", () => {
  it("runs a skill-lab package whose own harness case builds a package", async () => {
    const lab = join(REPO_ROOT, "packages", "runtime", "skills", "skill-lab");
    const h = await runx(ws, ["harness", lab, "--json"]);
    expect(h.code, h.stdout + h.stderr).toBe(0);
    expect(h.json()).toMatchObject({ status: "passed", case_names: ["builds-a-digest-note"] });
  });

  it("pauses needs_agent without a managed agent, and resuming writes the proposed package", async () => {
    const paused = await runx(ws, ["new", "digest-note", "--objective", OBJECTIVE, "--json"]);
    expect(paused.code, paused.stdout + paused.stderr).toBe(2);
    const first = paused.json<Envelope>();
    expect(first).toMatchObject({
      status: "needs_agent",
      skill_name: "skill-lab",
      runner: "build",
    });
    expect(first.requests.map((r) => r.id)).toEqual(["agent_task.design-architecture.output"]);
    expect(paused.stdout).toContain(OBJECTIVE);
    expect(ws.files("digest-note")).toEqual([]);

    const drafting = await runx(ws, ["resume", first.run_id, "-", "--json"], {
      stdin: JSON.stringify({
        answers: { "agent_task.design-architecture.output": { architecture_decision: decision() } },
      }),
    });
    expect(drafting.code, drafting.stdout + drafting.stderr).toBe(2);
    expect(drafting.json<Envelope>().requests.map((r) => r.id)).toEqual([
      "agent_task.draft-change.output",
    ]);
    const sealed = await runx(ws, ["resume", first.run_id, "-", "--json"], {
      stdin: JSON.stringify({
        answers: { "agent_task.draft-change.output": { change_draft: draft() } },
      }),
    });
    expect(sealed.code, sealed.stdout + sealed.stderr).toBe(0);
    expect(sealed.json<Envelope>()).toMatchObject({ status: "sealed", outcome: "completed" });
    expectNotePackage();
  });

  describe("with a managed agent configured", () => {
    let model: ModelServer;
    beforeEach(async () => {
      model = await startModelServer();
      await configureManagedAgent(ws, model, "sk-test");
    });
    afterEach(async () => {
      await model.close();
    });

    it("drives the proposal through the agent and writes a package that harnesses", async () => {
      model.replies.push(
        answerReply({ architecture_decision: decision() }),
        answerReply({ change_draft: draft() }),
      );
      const r = await runx(ws, ["new", "digest-note", "--objective", OBJECTIVE, "--json"]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.json<Envelope>()).toMatchObject({ status: "sealed", skill_name: "skill-lab" });
      expect(r.stdout).toContain('"verdict":"validated_and_applied"');
      expect(model.seen).toHaveLength(2);
      expect(JSON.stringify(model.seen[0]?.messages)).toContain(OBJECTIVE);
      expect(JSON.stringify(model.seen[1]?.messages)).toContain("architecture_plan");
      expectNotePackage();
      const harness = await runx(ws, ["harness", "digest-note", "--json"]);
      expect(harness.code, harness.stdout).toBe(0);
      expect(harness.json()).toMatchObject({ status: "passed" });
    });

    it("writes nothing when the agent's draft is refused by the authoring tools", async () => {
      const bad = draft();
      bad.writes = [{ path: "../outside.txt", contents: "x" }];
      model.replies.push(
        answerReply({ architecture_decision: decision() }),
        answerReply({ change_draft: bad }),
      );
      const r = await runx(ws, ["new", "digest-note", "--objective", OBJECTIVE, "--json"]);
      expect(r.code).toBe(1);
      expect(r.json<Envelope>()).toMatchObject({ status: "sealed", outcome: "blocked" });
      expect(r.stdout).toContain("step 'apply' failed: PATH_ESCAPE");
      expect(ws.files("digest-note")).toEqual([]);
    });
  });
});
