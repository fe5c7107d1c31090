/**
 * The gate before spawn, beyond dispatch.test.ts and preflight.test.ts:
 * every refusal is sealed with its exact code, spawns nothing (spy, sentinel, no attempt
 * directory) and leaves the workspace as it was. The approval binding is also exercised at the
 * gate itself, where the packet, authority and branch can change (a resume cannot: it refuses a
 * changed package before the gate runs).
 */
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createTaintSet } from "../redaction.js";
import { dispatchAttempt } from "./dispatch.js";
import type { DispatchOutcome, DispatchRequest } from "./dispatch.js";
import { PROBE_SCAN_BYTES } from "./preflight.js";
import type { ProbeRunner } from "./preflight.js";
import {
  dispatchOf,
  dispatchRun,
  expectSealedRefusal,
  JOURNAL,
  resumeRun,
  sentinelIn,
  snapshot,
  trustIn,
  writeAdapterSkill,
  scratchDirs,
} from "./test-support.js";
import { DEFAULT_CEILING } from "./vocabulary.js";

const { workspace, track } = scratchDirs();

/** fake-local's definition as a value, to derive variants from. */
function fakeLocal(root: string): Record<string, unknown> {
  return parse(readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
}

/** Writes `adapters/<id>.json` and a skill `<id>` that dispatches to it. */
function variant(root: string, id: string, change: (def: Record<string, unknown>) => void): void {
  const def = { ...fakeLocal(root), id };
  change(def);
  writeFileSync(join(root, "adapters", `${id}.json`), JSON.stringify(def));
  writeAdapterSkill(root, id, { adapter: id });
}

describe("A.2 invalid definitions are refused at dispatch as adapter_config_invalid", () => {
  it.each<[string, (def: Record<string, unknown>) => void, string]>([
    ["unknown-field", (d) => (d.sandbox = "none"), "sandbox: unknown field"],
    ["bad-id", (d) => (d.id = "Bad..Id"), "id: must match"],
    ["bad-env-name", (d) => (d.env = { allow: ["1BAD"] }), "env.allow[0]"],
    ["control-char", (d) => (d.env = { values: { X: "a\u0007b" } }), "control characters"],
    ["over-limit", (d) => (d.limits = { timeout_ms: 31 * 60_000 }), "limits.timeout_ms"],
    [
      "bad-min-version",
      (d) =>
        (d.tool_probe = {
          argv: ["node", "--version"],
          version_regex: "v(.*)",
          min_version: "latest",
        }),
      "tool_probe.min_version",
    ],
  ])("%s", async (id, change, reason) => {
    const root = workspace();
    variant(root, id, change);
    const { envelope } = await expectSealedRefusal(root, "adapter_config_invalid", { skill: id });
    expect(envelope.closure?.summary).toContain(reason);
  });
});

describe("A.3 forbidden executables, case- and extension-normalized", () => {
  it.each<[string, string[], string]>([
    ["shell", ["/bin/BASH.exe", "run.sh"], "a shell"],
    ["shell-cmd", ["CMD.EXE", "/c", "x"], "a shell"],
    ["pwsh", ["PwSh", "-File", "x.ps1"], "a shell"],
    ["runner-npx", ["npx", "agent"], "a package runner"],
    ["runner-pnpm", ["/usr/local/bin/PNPM.cmd", "dlx", "agent"], "a package runner"],
    ["downloader", ["curl", "https://example.invalid/x"], "a downloader"],
    ["wget", ["Wget.exe", "x"], "a downloader"],
    ["env", ["env", "node", "x.mjs"], "an environment wrapper"],
    ["sudo", ["sudo", "node", "x.mjs"], "an environment wrapper"],
    ["inline-node", ["node", "-e", "console.log(1)"], "runs inline code"],
    ["inline-python", ["python3", "-c", "print(1)"], "runs inline code"],
  ])("%s", async (id, argv, reason) => {
    const root = workspace();
    variant(root, id, (d) => (d.command = { argv, stdin: "packet_json" }));
    const { envelope } = await expectSealedRefusal(root, "forbidden_executable", { skill: id });
    expect(envelope.closure?.summary).toContain(reason);
  });

  it("also in the tool probe's argv", async () => {
    const root = workspace();
    variant(
      root,
      "probe-shell",
      (d) =>
        (d.tool_probe = {
          argv: ["sh", "-c", "node --version"],
          version_regex: "v(\\d+\\.\\d+\\.\\d+)",
          min_version: "18.0.0",
        }),
    );
    await expectSealedRefusal(root, "forbidden_executable", { skill: "probe-shell" });
  });
});

describe("A.5/A.6 the trusted digest covers the definition and its payload closure only", () => {
  it.each([
    ["the definition", "fake-local.yaml", "# reviewed again\n"],
    ["the referenced script", "fake-local/fake-local.mjs", "// edited\n"],
    ["the transitively imported helper", "fake-local/evidence.mjs", "// edited\n"],
  ])("editing %s invalidates trust", async (_what, file, text) => {
    const root = workspace();
    trustIn(root);
    appendFileSync(join(root, "adapters", file), text);
    const { envelope } = await expectSealedRefusal(root, "adapter_digest_mismatch");
    expect(envelope.closure?.summary).toContain("changed since it was trusted");
  });

  it("adding or editing an unrelated adapter leaves trust in fake-local intact", async () => {
    const root = workspace();
    trustIn(root);
    // `other` has its own copy of the payload; trust it, then change its definition and script.
    cpSync(join(root, "adapters", "fake-local"), join(root, "adapters", "other"), {
      recursive: true,
    });
    writeFileSync(
      join(root, "adapters", "other.yaml"),
      readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8")
        .replace("id: fake-local", "id: other")
        .replace("./fake-local/fake-local.mjs", "./other/fake-local.mjs"),
    );
    trustIn(root, "other");
    appendFileSync(join(root, "adapters", "other.yaml"), "# edited\n");
    appendFileSync(join(root, "adapters", "other", "fake-local.mjs"), "// edited\n");
    appendFileSync(join(root, "adapters", "other", "evidence.mjs"), "// edited\n");
    const { envelope, spawns } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    expect(dispatchOf(envelope)).toMatchObject({ status: "completed", failure_code: null });
    expect(spawns).toBe(1);
    writeAdapterSkill(root, "other", { adapter: "other" });
    await expectSealedRefusal(root, "adapter_digest_mismatch", { skill: "other" });
  });
});

describe("A.8 every package_not_executable cause", () => {
  it.each<
    [
      string,
      { inputs?: Record<string, unknown>; skill?: Parameters<typeof writeAdapterSkill>[2] },
      string,
    ]
  >([
    ["objective", { inputs: { objective: "  " } }, "missing objective"],
    ["acceptance", { inputs: { acceptance_criteria: [] } }, "missing acceptance_criteria"],
    ["verification", { inputs: { verification: [] } }, "missing verification"],
    [
      "all-three",
      { inputs: { objective: "", acceptance_criteria: [], verification: [] } },
      "objective, acceptance_criteria, verification",
    ],
    ["lane", { skill: { lane: "" } }, "missing lane"],
    [
      "unknown-word",
      { skill: { authority: ["read_only", "root_access"] } },
      "unknown authority words: root_access",
    ],
    [
      "commit-policy",
      { skill: { commitPolicy: "commit_allowed" } },
      "commit policy is commit_allowed",
    ],
    [
      "blocking-question",
      {
        inputs: {
          open_questions: [
            { question_id: "q_soft", text: "nice to know", blocking: false },
            { question_id: "q_hard", text: "which db?", blocking: true },
          ],
        },
      },
      "blocking open questions: q_hard",
    ],
  ])("%s", async (name, opts, reason) => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, name, opts.skill ?? {});
    const { envelope } = await expectSealedRefusal(root, "package_not_executable", {
      skill: name,
      ...(opts.inputs !== undefined ? { inputs: opts.inputs } : {}),
    });
    expect(envelope.closure?.summary).toContain(reason);
    expect(envelope.closure?.summary).not.toContain("q_soft");
  });

  it("an unsupported workflow is unsupported_lane (A.9)", async () => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, "wf", { workflow: "deploy" });
    const { envelope } = await expectSealedRefusal(root, "unsupported_lane", { skill: "wf" });
    expect(envelope.closure?.summary).toContain("workflow deploy");
  });
});

describe("B.12/B.13 spawn authority comes only from the operator's invocation", () => {
  it("a skill default of allow_spawn: true is ignored: a sealed dry run, nothing spawned", async () => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, "eager", { allowSpawnDefault: true });
    const { attempt } = await expectSealedRefusal(root, "spawn_authority_missing", {
      skill: "eager",
      allowSpawn: false,
      status: "dry_run",
      inputs: { fixture_mode: "complete" },
    });
    expect(attempt.dispatch.status).toBe("dry_run");
    expect(attempt.dispatch.spawn_authority).toEqual({
      granted: false,
      source: null,
      principal: null,
    });
  });

  it("allow_spawn from a model's output, fed to the step by the graph, is ignored", async () => {
    const root = workspace();
    trustIn(root);
    mkdirSync(join(root, "skills", "think-then-hand"), { recursive: true });
    writeFileSync(
      join(root, "skills", "think-then-hand", "SKILL.md"),
      "---\nname: think-then-hand\n---\nA model decides, then the adapter runs.\n",
    );
    writeFileSync(
      join(root, "skills", "think-then-hand", "X.yaml"),
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: think-then-hand",
        "      steps:",
        "        - id: think",
        "          run:",
        "            type: agent-task",
        "            agent: planner",
        "            task: decide",
        "            outputs:",
        "              allow_spawn: boolean",
        "        - id: hand",
        "          skill: ../dispatch",
        "          inputs:",
        "            objective: Summarize the README",
        "            acceptance_criteria: [a summary exists]",
        "            verification: [test -f evidence.txt]",
        "            fixture_mode: complete",
        "            allow_spawn: $steps.think.allow_spawn",
        "",
      ].join("\n"),
    );
    const before = snapshot(root, JOURNAL);
    const { envelope: asking, spawns } = await dispatchRun(root, { skill: "think-then-hand" });
    expect(asking.status).toBe("needs_agent");
    expect(spawns).toBe(0);
    const request = asking.requests[0]!;
    // The model answers allow_spawn: true; the operator resumes without --allow-spawn.
    const { envelope, spawns: resumed } = await resumeRun(root, asking.run_id, {
      answers: { [request.id]: { allow_spawn: true } },
    });
    expect(envelope.status).toBe("sealed");
    expect(resumed).toBe(0);
    expect(sentinelIn(root)).toBe(false);
    const runtimeFiles = Object.keys(snapshot(root, JOURNAL)).filter((f) => !(f in before));
    expect(runtimeFiles.filter((f) => f.includes("/dispatch/"))).toEqual([]);
    const runtime = (await import("./test-support.js")).adapterRuntime(root);
    try {
      const [attempt] = await runtime.adapters.attempts(asking.run_id);
      expect(attempt?.verified).toBe(true);
      expect(attempt?.dispatch).toMatchObject({
        status: "dry_run",
        failure: expect.objectContaining({ code: "spawn_authority_missing" }),
        spawn_authority: { granted: false, source: null, principal: null },
        process: expect.objectContaining({ spawned: false }),
      });
    } finally {
      runtime.close();
    }
  });
});

describe("C.14/C.15 approval: a pause before anything spawns, stale when anything bound changes", () => {
  it("pauses needs_approval with zero spawns, no sentinel and no attempt directory", async () => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const before = snapshot(root, JOURNAL);
    const { envelope, spawns } = await dispatchRun(root, { skill: "gated", allowSpawn: true });
    expect(envelope.status).toBe("needs_approval");
    expect(envelope.requests).toEqual([
      expect.objectContaining({ id: "adapter.dispatch.approval", kind: "approval" }),
    ]);
    expect(spawns).toBe(0);
    expect(sentinelIn(root)).toBe(false);
    expect(snapshot(root, JOURNAL)).toEqual(before);
  });

  it("an expired approval is approval_stale, sealed, and spawns nothing", async () => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const { envelope: paused } = await dispatchRun(root, {
      skill: "gated",
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    const later = new Date(Date.now() + 25 * 60 * 60 * 1000);
    const before = snapshot(root, JOURNAL);
    const { envelope, spawns } = await resumeRun(
      root,
      paused.run_id,
      { approvals: { [paused.requests[0]!.id]: true } },
      { allowSpawn: true, runtime: { now: () => later } },
    );
    expect(dispatchOf(envelope)).toMatchObject({
      status: "rejected",
      failure_code: "approval_stale",
    });
    expect(envelope.closure?.summary).toContain("expired");
    expect(spawns).toBe(0);
    expect(sentinelIn(root)).toBe(false);
    expect(snapshot(root, JOURNAL)).toEqual(before);
  });

  it("a changed package cannot be resumed into the gate at all (its digest is bound by the pause)", async () => {
    const root = workspace();
    trustIn(root);
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const { envelope: paused } = await dispatchRun(root, { skill: "gated", allowSpawn: true });
    writeAdapterSkill(root, "gated", {
      authority: ["read_only", "write_artifacts_only", "human_approval_required"],
    });
    await expect(
      resumeRun(
        root,
        paused.run_id,
        { approvals: { [paused.requests[0]!.id]: true } },
        { allowSpawn: true },
      ),
    ).rejects.toMatchObject({ code: "RESUME_REFUSED" });
    expect(sentinelIn(root)).toBe(false);
  });

  /** A request straight to the gate, as adapter-step.ts builds it. */
  function request(
    root: string,
    spawned: { n: number },
    extra: Partial<DispatchRequest> = {},
  ): DispatchRequest {
    return {
      root,
      runxDir: join(root, ".runx"),
      runId: "run_gate_1",
      stepId: "dispatch",
      graphRunId: null,
      attempt: 1,
      skill: { name: "dispatch", version: null, digest: `sha256:${"a".repeat(64)}` },
      adapter: {
        id: "fake-local",
        lane: "plain-agent",
        workflow: null,
        authority: ["read_only", "human_approval_required"],
        commit_policy: "commit_forbidden",
        workspace: { worktree: null, branch: "feature/x", base_commit: null },
      },
      ceiling: DEFAULT_CEILING,
      inputs: {
        objective: "Summarize the README",
        acceptance_criteria: ["a summary exists"],
        verification: ["test -f evidence.txt"],
        fixture_mode: "complete",
      },
      baseEnv: { PATH: process.env.PATH },
      secrets: {},
      taint: createTaintSet([]),
      spawnAuthority: { granted: true, source: "cli", principal: "runx:principal:tester" },
      approval: null,
      fixtureModes: true,
      now: () => new Date("2030-01-01T00:00:00Z"),
      signal: new AbortController().signal,
      invokedBy: "runx:principal:tester",
      onSpawn: () => (spawned.n += 1),
      ...extra,
    };
  }

  it.each<[string, (r: DispatchRequest, root: string) => Partial<DispatchRequest>]>([
    ["the packet", (r) => ({ inputs: { ...r.inputs, objective: "Summarize the LICENSE" } })],
    [
      "the authority",
      (r) => ({
        adapter: { ...r.adapter, authority: [...r.adapter.authority, "write_artifacts_only"] },
      }),
    ],
    [
      "the branch",
      (r) => ({
        adapter: { ...r.adapter, workspace: { ...r.adapter.workspace, branch: "feature/y" } },
      }),
    ],
    [
      "the adapter digest",
      (_r, root) => {
        appendFileSync(join(root, "adapters", "fake-local", "evidence.mjs"), "// changed\n");
        trustIn(root);
        return {};
      },
    ],
    ["the clock (expiry)", () => ({ now: () => new Date("2030-01-03T00:00:00Z") })],
  ])("changing %s after approval is approval_stale at the gate", async (_what, change) => {
    const root = workspace();
    trustIn(root);
    const spawned = { n: 0 };
    const first = await dispatchAttempt(request(root, spawned));
    expect(first.kind).toBe("needs_approval");
    const binding = (first as Extract<DispatchOutcome, { kind: "needs_approval" }>).binding;
    const approval = { approved: true, binding, requestReceiptId: "sha256:paused", approver: "op" };
    const base = request(root, spawned);
    const changed = { ...base, ...change(base, root), approval };
    const before = snapshot(root, []);
    const outcome = await dispatchAttempt(changed);
    expect(outcome.kind).toBe("attempt");
    const body = (outcome as Extract<DispatchOutcome, { kind: "attempt" }>).body;
    expect(body).toMatchObject({
      status: "rejected",
      failure: expect.objectContaining({ code: "approval_stale" }),
    });
    expect(body.process.spawned).toBe(false);
    expect(spawned.n).toBe(0);
    expect(sentinelIn(root)).toBe(false);
    expect(snapshot(root, [])).toEqual(before);
  });

  it("the unchanged approval passes the same gate and spawns exactly once (the control)", async () => {
    const root = workspace();
    trustIn(root);
    const spawned = { n: 0 };
    const first = await dispatchAttempt(request(root, spawned));
    const binding = (first as Extract<DispatchOutcome, { kind: "needs_approval" }>).binding;
    const outcome = await dispatchAttempt(
      request(root, spawned, {
        approval: { approved: true, binding, requestReceiptId: "sha256:paused", approver: "op" },
      }),
    );
    expect((outcome as Extract<DispatchOutcome, { kind: "attempt" }>).body.status).toBe(
      "completed",
    );
    expect(spawned.n).toBe(1);
  });
});

/**
 * A scripted git and tool: the launch gate asks it in a fixed order, and each refusal stops
 * after a known number of calls (launch-gate matrix).
 */
function scripted(
  facts: { toplevel: string; gitDir: string; commonDir: string; branch: string; head: string },
  tool: { exitCode: number | null; stdout: string } | null,
): { probe: ProbeRunner; calls: string[] } {
  const calls: string[] = [];
  const probe: ProbeRunner = (argv) => {
    const line = argv.join(" ");
    calls.push(line);
    if (line === "git rev-parse --show-toplevel --git-dir --git-common-dir")
      return Promise.resolve({
        exitCode: 0,
        stdout: `${facts.toplevel}\n${facts.gitDir}\n${facts.commonDir}\n`,
      });
    if (line === "git rev-parse --abbrev-ref HEAD")
      return Promise.resolve({ exitCode: 0, stdout: `${facts.branch}\n` });
    if (line === "git rev-parse HEAD")
      return Promise.resolve({ exitCode: 0, stdout: `${facts.head}\n` });
    if (line === "node --version") return Promise.resolve(tool);
    return Promise.resolve({ exitCode: 0, stdout: "" });
  };
  return { probe, calls };
}

describe("D.22 the launch gate through an injected runner: call order and counts", () => {
  const BASE = "1".repeat(40);
  const GIT = [
    "git rev-parse --show-toplevel --git-dir --git-common-dir",
    "git rev-parse --abbrev-ref HEAD",
    "git rev-parse HEAD",
  ];

  /** A workspace whose adapter requires a worktree, and a worktree directory beside it. */
  function gated(): { root: string; worktree: string; ref: string } {
    const root = workspace();
    appendFileSync(
      join(root, "adapters", "fake-local.yaml"),
      "workspace:\n  requires_worktree: true\n",
    );
    trustIn(root);
    const worktree = realpathSync(join(root, "..")) + `/${basename(root)}-wt`;
    mkdirSync(worktree);
    track(worktree);
    return { root, worktree, ref: `../${basename(worktree)}` };
  }

  function facts(worktree: string, over: Partial<Parameters<typeof scripted>[0]> = {}) {
    return {
      toplevel: worktree,
      gitDir: `${worktree}-main/.git/worktrees/wt`,
      commonDir: `${worktree}-main/.git`,
      branch: "feature/x",
      head: BASE,
      ...over,
    };
  }

  it.each<
    [
      string,
      Partial<Parameters<typeof scripted>[0]>,
      { exitCode: number | null; stdout: string } | null,
      string,
      number,
    ]
  >([
    [
      "not a linked worktree",
      { gitDir: "/r/.git", commonDir: "/r/.git" },
      null,
      "worktree_not_isolated",
      1,
    ],
    ["on another branch", { branch: "feature/y" }, null, "branch_mismatch", 2],
    ["at another commit", { head: "2".repeat(40) }, null, "base_commit_mismatch", 3],
    ["tool missing", {}, null, "missing_tool", 4],
    ["tool too old", {}, { exitCode: 0, stdout: "v17.9.1\n" }, "tool_version_unsupported", 4],
    [
      "tool unparseable",
      {},
      { exitCode: 0, stdout: "node (custom build)\n" },
      "tool_version_unsupported",
      4,
    ],
    ["tool prints nothing", {}, { exitCode: 0, stdout: "" }, "tool_version_unsupported", 4],
    [
      "tool prerelease (-rc)",
      {},
      { exitCode: 0, stdout: "v22.1.0-rc.1\n" },
      "tool_version_unsupported",
      4,
    ],
    [
      "tool prerelease (rc1)",
      {},
      { exitCode: 0, stdout: "v22.1.0rc1\n" },
      "tool_version_unsupported",
      4,
    ],
    [
      "tool prerelease (.dev0)",
      {},
      { exitCode: 0, stdout: "v22.1.0.dev0\n" },
      "tool_version_unsupported",
      4,
    ],
    [
      "tool prerelease (-nightly)",
      {},
      { exitCode: 0, stdout: "v23.0.0-nightly20240101\n" },
      "tool_version_unsupported",
      4,
    ],
  ])(
    "%s: refused with its code after exactly its calls",
    async (_label, over, tool, code, count) => {
      const g = gated();
      writeAdapterSkill(g.root, "dispatch", {
        workspace: { worktree: g.ref, branch: "feature/x", base_commit: BASE },
      });
      const { probe, calls } = scripted(facts(g.worktree, over), tool);
      await expectSealedRefusal(g.root, code, { probe, also: [g.worktree] });
      expect(calls).toEqual([...GIT, "node --version"].slice(0, count));
    },
  );

  it.each<[string, Record<string, string>]>([
    ["missing worktree", { branch: "feature/x" }],
    ["worktree inside the checkout", { worktree: "adapters", branch: "feature/x" }],
  ])("%s → refused before any call", async (_label, ws) => {
    const g = gated();
    writeAdapterSkill(g.root, "dispatch", { workspace: ws });
    const { probe, calls } = scripted(facts(g.worktree), { exitCode: 0, stdout: "v22.0.0\n" });
    const { attempt } = await expectSealedRefusal(
      g.root,
      ws.worktree === undefined ? "missing_worktree" : "worktree_not_isolated",
      { probe },
    );
    expect(attempt.dispatch.failure?.phase).toBe("preflight");
    expect(calls).toEqual([]);
  });

  it("no --allow-spawn → a dry run with zero calls", async () => {
    const g = gated();
    writeAdapterSkill(g.root, "dispatch", {
      workspace: { worktree: g.ref, branch: "feature/x", base_commit: BASE },
    });
    const { probe, calls } = scripted(facts(g.worktree), { exitCode: 0, stdout: "v22.0.0\n" });
    await expectSealedRefusal(g.root, "spawn_authority_missing", {
      probe,
      allowSpawn: false,
      status: "dry_run",
    });
    expect(calls).toEqual([]);
  });

  it("a release, build metadata or a fourth component passes; allow_prerelease admits a prerelease", async () => {
    for (const [stdout, allowPrerelease] of [
      ["v22.1.0\n", false],
      ["v22.1.0+build.7\n", false],
      ["v22.1.0.4 (LTS)\n", false],
      ["v22.1.0-rc.1\n", true],
    ] as const) {
      const root = workspace();
      if (allowPrerelease)
        writeFileSync(
          join(root, "adapters", "fake-local.yaml"),
          readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8").replace(
            'min_version: "18.0.0"',
            'min_version: "18.0.0"\n  allow_prerelease: true',
          ),
        );
      trustIn(root);
      const calls: string[] = [];
      const probe: ProbeRunner = (argv) => {
        calls.push(argv.join(" "));
        return Promise.resolve({ exitCode: 0, stdout });
      };
      const { envelope, spawns } = await dispatchRun(root, {
        probe,
        allowSpawn: true,
        inputs: { fixture_mode: "complete" },
      });
      expect([stdout, dispatchOf(envelope).status]).toEqual([stdout, "completed"]);
      expect(spawns).toBe(1);
      expect(calls).toEqual(["node --version"]);
    }
  });

  it("a version printed on stderr (java -version) is read after stdout; stdout wins when both have one", async () => {
    const javaProbe = (root: string): void =>
      writeFileSync(
        join(root, "adapters", "fake-local.yaml"),
        readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8")
          .replace("argv: [node, --version]", "argv: [java, -version]")
          .replace(
            'version_regex: "v(\\\\d+\\\\.\\\\d+\\\\.\\\\d+)"',
            'version_regex: "version \\"(\\\\d+\\\\.\\\\d+\\\\.\\\\d+)"',
          )
          .replace('min_version: "18.0.0"', 'min_version: "17.0.0"'),
      );
    const JAVA_21 = 'openjdk version "21.0.2" 2024-01-16\nOpenJDK Runtime Environment\n';
    const JAVA_11 = 'openjdk version "11.0.22" 2024-01-16\n';
    for (const [label, answer, expected] of [
      ["stderr only", { exitCode: 0, stdout: "", stderr: JAVA_21 }, "completed"],
      ["stdout first", { exitCode: 0, stdout: JAVA_21, stderr: JAVA_11 }, "completed"],
      ["stdout too old", { exitCode: 0, stdout: JAVA_11, stderr: JAVA_21 }, "rejected"],
      ["stderr too old", { exitCode: 0, stdout: "", stderr: JAVA_11 }, "rejected"],
      ["neither", { exitCode: 0, stdout: "java\n", stderr: "no version\n" }, "rejected"],
      [
        "past the scan bound",
        { exitCode: 0, stdout: "", stderr: `${"x".repeat(PROBE_SCAN_BYTES)}\n${JAVA_21}` },
        "rejected",
      ],
    ] as const) {
      const root = workspace();
      javaProbe(root);
      trustIn(root);
      const calls: string[] = [];
      const probe: ProbeRunner = (argv) => {
        calls.push(argv.join(" "));
        return Promise.resolve(answer);
      };
      const { envelope, spawns } = await dispatchRun(root, {
        probe,
        allowSpawn: true,
        inputs: { fixture_mode: "complete" },
      });
      const dispatch = dispatchOf(envelope);
      expect([label, dispatch.status]).toEqual([label, expected]);
      expect([label, spawns]).toEqual([label, expected === "completed" ? 1 : 0]);
      if (expected === "rejected")
        expect([label, dispatch.failure_code]).toEqual([label, "tool_version_unsupported"]);
      expect(calls).toEqual(["java -version"]);
      if (expected === "completed") {
        const runtime = (await import("./test-support.js")).adapterRuntime(root);
        try {
          const [attempt] = await runtime.adapters.attempts(envelope.run_id);
          expect(attempt?.dispatch.adapter.tool_probe).toMatchObject({
            detected_version: "21.0.2",
            ok: true,
          });
        } finally {
          runtime.close();
        }
      }
    }
  });

  it("the real probe runner reports a binary that does not exist as missing_tool", async () => {
    const root = workspace();
    writeFileSync(
      join(root, "adapters", "fake-local.yaml"),
      readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8").replace(
        "argv: [node, --version]",
        "argv: [runx-no-such-tool-binary, --version]",
      ),
    );
    trustIn(root);
    const { attempt } = await expectSealedRefusal(root, "missing_tool");
    expect(attempt.dispatch.adapter.tool_probe).toMatchObject({
      ok: false,
      detected_version: null,
    });
  });

  it("a non-zero exit after the whole gate is a failed receipt with its logs; git is asked again after the run", async () => {
    const g = gated();
    writeAdapterSkill(g.root, "dispatch", {
      workspace: { worktree: g.ref, branch: "feature/x", base_commit: BASE },
    });
    const { probe, calls } = scripted(facts(g.worktree), { exitCode: 0, stdout: "v22.0.0\n" });
    const { envelope, spawns } = await dispatchRun(g.root, {
      probe,
      allowSpawn: true,
      inputs: { fixture_mode: "nonzero_exit" },
    });
    expect(spawns).toBe(1);
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "runtime_non_zero",
    });
    expect(calls).toEqual([
      ...GIT,
      "node --version",
      "git rev-parse HEAD",
      "git status --porcelain=v1 --untracked-files=all",
      `git diff --name-only ${BASE}`,
    ]);
    const runtime = (await import("./test-support.js")).adapterRuntime(g.root);
    try {
      const [attempt] = await runtime.adapters.attempts(envelope.run_id);
      expect(attempt?.dispatch.logs.map((l) => l.stream)).toEqual(["stdout", "stderr"]);
      expect(attempt?.dispatch.process.exit_code).toBe(3);
    } finally {
      runtime.close();
    }
  });
});

describe("gate step 12 (path_unsafe): the output directory is fresh and reached without a symlink", () => {
  /** Fixed ids so the run's attempt directory is known before the run. */
  const fixedIds = { randomHex: (n: number) => "ab".repeat(n) };
  const RUN = `run_dispatch_${"ab".repeat(8)}`;

  it("refuses a symlinked run directory before creating anything through it", async () => {
    const root = workspace();
    trustIn(root);
    const outside = `${root}-elsewhere`;
    track(outside);
    mkdirSync(outside);
    mkdirSync(join(root, ".runx", "runs"), { recursive: true });
    symlinkSync(outside, join(root, ".runx", "runs", RUN));
    const { envelope, spawns } = await dispatchRun(root, {
      allowSpawn: true,
      runtime: fixedIds,
      inputs: { fixture_mode: "complete" },
    });
    expect(envelope.run_id).toBe(RUN);
    expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: "path_unsafe" });
    expect(spawns).toBe(0);
    // Nothing of the attempt (record, attempt directory) was created at the link's target.
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses an attempt directory that already exists", async () => {
    const root = workspace();
    trustIn(root);
    mkdirSync(join(root, ".runx", "runs", RUN, "dispatch", "dispatch", "1"), { recursive: true });
    writeFileSync(join(root, ".runx", "runs", RUN, "dispatch", "dispatch", "1", "planted"), "x");
    const { envelope, spawns } = await dispatchRun(root, {
      allowSpawn: true,
      runtime: fixedIds,
      inputs: { fixture_mode: "complete" },
    });
    expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: "path_unsafe" });
    expect(spawns).toBe(0);
    expect(sentinelIn(root)).toBe(false);
  });
});
