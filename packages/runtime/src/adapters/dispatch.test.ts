import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { writeAttemptRecord } from "./records.js";
import {
  adapterRuntime,
  goodInputs,
  snapshot,
  writeAdapterSkill,
  scratchDirs,
} from "./test-support.js";

const { workspace, track } = scratchDirs();

interface Dispatch {
  status: string;
  failure_code: string | null;
  receipt_id: string;
  artifacts: Array<{ path: string }>;
}

function dispatchOf(envelope: SkillRunEnvelope): Dispatch {
  return (envelope.result as { dispatch: Dispatch }).dispatch;
}

/** Runs the `dispatch` skill once; counts spawns through the runtime's spy. */
async function run(
  root: string,
  opts: {
    inputs?: Record<string, unknown>;
    allowSpawn?: boolean;
    secretEnv?: string[];
    env?: Record<string, string>;
    skill?: string;
  } = {},
): Promise<{ envelope: SkillRunEnvelope; spawns: number }> {
  let spawns = 0;
  const runtime = adapterRuntime(root, { onAdapterSpawn: () => (spawns += 1) }, opts.env);
  try {
    const envelope = await runtime.runSkill({
      ref: opts.skill ?? "dispatch",
      inputs: goodInputs(opts.inputs),
      secretEnv: opts.secretEnv ?? [],
      ...(opts.allowSpawn === true ? { allowSpawn: true } : {}),
    });
    return { envelope, spawns };
  } finally {
    runtime.close();
  }
}

function trust(root: string, id = "fake-local"): void {
  const runtime = adapterRuntime(root);
  try {
    runtime.adapters.trust(id);
  } finally {
    runtime.close();
  }
}

async function attempts(root: string, runId: string) {
  const runtime = adapterRuntime(root);
  try {
    return await runtime.adapters.attempts(runId);
  } finally {
    runtime.close();
  }
}

async function verifyAll(root: string): Promise<boolean> {
  const runtime = adapterRuntime(root);
  try {
    const report = await runtime.verifyStore({ allowLocalDevelopment: true });
    return report.valid;
  } finally {
    runtime.close();
  }
}

/** Files a refusal may touch: the receipt store, the state store, the package cache and the dispatch record. */
const JOURNAL = [
  ".runx/receipts",
  ".runx/state.sqlite",
  ".runx/state.sqlite-wal",
  ".runx/state.sqlite-shm",
  ".runx/cache",
];

function sentinelExists(root: string): boolean {
  const runs = join(root, ".runx", "runs");
  if (!existsSync(runs)) return false;
  return readdirSync(runs).some((run) => {
    const dir = join(runs, run, "dispatch", "dispatch");
    return existsSync(dir) && readdirSync(dir).some((n) => existsSync(join(dir, n, "sentinel")));
  });
}

async function expectRefusal(
  root: string,
  code: string,
  opts: Parameters<typeof run>[1] = {},
): Promise<SkillRunEnvelope> {
  // Prime the package cache so the snapshot compares only what the attempt itself writes.
  const before = snapshot(root, JOURNAL);
  const { envelope, spawns } = await run(root, { allowSpawn: true, ...opts });
  expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: code });
  expect(spawns).toBe(0);
  expect(sentinelExists(root)).toBe(false);
  const after = snapshot(root, JOURNAL);
  expect(after).toEqual(before);
  const [attempt] = await attempts(root, envelope.run_id);
  expect(attempt?.verified).toBe(true);
  expect(attempt?.dispatch.process.spawned).toBe(false);
  expect(await verifyAll(root)).toBe(true);
  return envelope;
}

describe("adapter dispatch: admission refusals write nothing and spawn nothing", () => {
  it("refuses an unknown adapter", async () => {
    const root = workspace();
    writeAdapterSkill(root, "other", { adapter: "no-such-adapter" });
    await expectRefusal(root, "unsupported_adapter", { skill: "other" });
  });

  it("refuses an untrusted adapter", async () => {
    await expectRefusal(workspace(), "adapter_not_trusted");
  });

  it("refuses after a transitively imported helper changed, but not after an unrelated adapter changed", async () => {
    const root = workspace();
    trust(root);
    writeFileSync(
      join(root, "adapters", "other.yaml"),
      readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8").replace(
        "id: fake-local",
        "id: other",
      ),
    );
    const { envelope } = await run(root, { inputs: { fixture_mode: "complete" } });
    expect(dispatchOf(envelope).status).toBe("dry_run");
    writeFileSync(
      join(root, "adapters", "fake-local", "evidence.mjs"),
      "export function evidenceText() { return 'x'; }\n",
    );
    await expectRefusal(root, "adapter_digest_mismatch");
  });

  it("refuses a packet without verification and one with a blocking open question", async () => {
    const root = workspace();
    trust(root);
    await expectRefusal(root, "package_not_executable", { inputs: { verification: [] } });
    const env = await expectRefusal(root, "package_not_executable", {
      inputs: { open_questions: [{ question_id: "q_which", text: "which one?", blocking: true }] },
    });
    expect(env.closure?.summary).toContain("q_which");
  });

  it("refuses an unsupported lane and a scope above the adapter maximum or the policy ceiling", async () => {
    const root = workspace();
    trust(root);
    writeAdapterSkill(root, "lane", { lane: "omx-codex" });
    await expectRefusal(root, "unsupported_lane", { skill: "lane" });
    writeAdapterSkill(root, "net", {
      authority: ["network_allowed"],
      ceiling: ["network_allowed"],
    });
    await expectRefusal(root, "unsafe_scope", { skill: "net" });
    writeAdapterSkill(root, "edit", { authority: ["edit_worktree"] });
    await expectRefusal(root, "unsafe_scope", { skill: "edit" });
  });
});

describe("adapter dispatch: dry run and approval", () => {
  it("records a dry run without --allow-spawn, also when allow_spawn arrives as an input", async () => {
    const root = workspace();
    trust(root);
    const { envelope, spawns } = await run(root, { inputs: { allow_spawn: true } });
    expect(envelope.status).toBe("sealed");
    expect(envelope.closure?.disposition).toBe("closed");
    expect(dispatchOf(envelope)).toMatchObject({
      status: "dry_run",
      failure_code: "spawn_authority_missing",
    });
    expect(spawns).toBe(0);
    expect(sentinelExists(root)).toBe(false);
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.dispatch.spawn_authority).toEqual({
      granted: false,
      source: null,
      principal: null,
    });
    expect(validateAdaptersDispatchReceipt(attempt?.dispatch)).toBe(true);
  });

  it("checks spawn authority before approval: without --allow-spawn nobody is asked to approve", async () => {
    const root = workspace();
    trust(root);
    writeAdapterSkill(root, "gated", {
      authority: ["read_only", "human_approval_required"],
    });
    const { envelope, spawns } = await run(root, { skill: "gated" });
    expect(envelope.status).toBe("sealed");
    expect(envelope.requests).toEqual([]);
    expect(dispatchOf(envelope)).toMatchObject({
      status: "dry_run",
      failure_code: "spawn_authority_missing",
    });
    expect(spawns).toBe(0);
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.dispatch.authority.approval_policy).toBe("required");
    expect(attempt?.dispatch.approval).toBeNull();
    // With the flag, the same dispatch stops for a human before anything spawns.
    const gated = await run(root, { skill: "gated", allowSpawn: true });
    expect(gated.envelope.status).toBe("needs_approval");
    expect(gated.spawns).toBe(0);
  });

  it("pauses for approval, spawns only after it, and refuses a stale approval", async () => {
    const root = workspace();
    trust(root);
    writeAdapterSkill(root, "cred", {
      authority: ["read_only", "credentials:FAKE_TOKEN"],
      ceiling: ["read_only", "credentials:FAKE_TOKEN"],
    });
    const secret = "tok_SUPERSECRET_123456";
    const env = { FAKE_TOKEN: secret };
    const { envelope: paused, spawns } = await run(root, {
      skill: "cred",
      secretEnv: ["FAKE_TOKEN"],
      env,
      allowSpawn: true,
      inputs: { fixture_mode: "secret_echo" },
    });
    expect(paused.status).toBe("needs_approval");
    expect(spawns).toBe(0);
    const gate = paused.requests[0];
    expect(gate?.kind).toBe("approval");
    let resumedSpawns = 0;
    const runtime = adapterRuntime(root, { onAdapterSpawn: () => (resumedSpawns += 1) }, env);
    let sealed: SkillRunEnvelope;
    try {
      sealed = await runtime.resumeWith({
        runId: paused.run_id,
        document: { approvals: { [gate!.id]: true } },
        allowSpawn: true,
      });
    } finally {
      runtime.close();
    }
    expect(resumedSpawns).toBe(1);
    expect(dispatchOf(sealed)).toMatchObject({ status: "completed", failure_code: null });
    const [attempt] = await attempts(root, paused.run_id);
    expect(attempt?.verified).toBe(true);
    expect(attempt?.dispatch.approval?.receipt_id).toBe(paused.receipt_id);
    expect(attempt?.dispatch.process.env_keys).toContain("FAKE_TOKEN");
    expect(attempt?.dispatch.process.credential_refs).toEqual(["FAKE_TOKEN"]);
    // The credential, the bearer token and the workspace path never reach logs, receipts or records.
    const stored = [
      ...readdirSync(join(root, ".runx", "receipts")).map((f) =>
        readFileSync(join(root, ".runx", "receipts", f), "utf8"),
      ),
      readFileSync(
        join(root, ".runx", "runs", paused.run_id, "dispatches", "dispatch-1.json"),
        "utf8",
      ),
      readFileSync(
        join(root, ".runx", "runs", paused.run_id, "dispatch", "dispatch", "1", "stdout.log"),
        "utf8",
      ),
    ].join("\n");
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain("abcdefghijklmnop1234");
    expect(stored).not.toContain(root);
    expect(stored).toContain("[redacted-credential]");
    expect(await verifyAll(root)).toBe(true);

    // A second run: the adapter changes between approval and resume.
    const { envelope: again } = await run(root, {
      skill: "cred",
      secretEnv: ["FAKE_TOKEN"],
      env,
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    writeFileSync(
      join(root, "adapters", "fake-local", "evidence.mjs"),
      "export function evidenceText() { return 'y'; }\n",
    );
    trust(root);
    const runtime2 = adapterRuntime(root, {}, env);
    try {
      const stale = await runtime2.resumeWith({
        runId: again.run_id,
        document: { approvals: { [again.requests[0]!.id]: true } },
        allowSpawn: true,
      });
      expect(dispatchOf(stale)).toMatchObject({
        status: "rejected",
        failure_code: "approval_stale",
      });
    } finally {
      runtime2.close();
    }
  });
});

describe("adapter dispatch: launch and collection", () => {
  it("completes the golden path: evidence validated, parent commits the child, the tree verifies", async () => {
    const root = workspace();
    trust(root);
    const { envelope, spawns } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    expect(spawns).toBe(1);
    const dispatch = dispatchOf(envelope);
    expect(dispatch).toMatchObject({ status: "completed", failure_code: null });
    expect(dispatch.artifacts.map((a) => a.path)).toEqual(["evidence.txt"]);
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.verified).toBe(true);
    expect(attempt?.dispatch.process).toMatchObject({
      spawned: true,
      exit_code: 0,
      process_boundary: "trusted_host_process",
    });
    expect(attempt?.dispatch.boundary).toEqual({
      proves_handoff_only: true,
      not_approval: true,
      not_correctness: true,
    });
    const parent = JSON.parse(
      readFileSync(
        join(
          root,
          ".runx",
          "receipts",
          readdirSync(join(root, ".runx", "receipts")).find((f) =>
            f.includes(envelope.receipt_id!.slice(7, 20)),
          ) ?? "x",
        ),
        "utf8",
      ),
    ) as { lineage: { children: Array<{ uri: string }> } };
    expect(parent.lineage.children.map((c) => c.uri)).toEqual([
      `runx:receipt:${dispatch.receipt_id}`,
    ]);
    expect(await verifyAll(root)).toBe(true);
  });

  it("delivers only PATH, the allowlist and literal values to the child", async () => {
    const root = workspace();
    trust(root);
    const { envelope } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "env_probe" },
      env: { PARENT_SECRET: "hunter2hunter2" },
    });
    const names = readFileSync(
      join(root, ".runx", "runs", envelope.run_id, "dispatch", "dispatch", "1", "out", "env.txt"),
      "utf8",
    ).split("\n");
    expect(names).toContain("FAKE_LOCAL_GREETING");
    expect(names).not.toContain("PARENT_SECRET");
    expect(names).not.toContain("HOME");
    const [attempt] = await attempts(root, envelope.run_id);
    expect(JSON.stringify(attempt?.dispatch)).not.toContain("hunter2");
  });

  it.each([
    ["exit0_no_manifest", "manifest_missing"],
    ["malformed_manifest", "manifest_invalid"],
    ["manifest_symlink", "manifest_invalid"],
    ["wrong_run_id", "manifest_run_mismatch"],
    ["nonzero_exit", "runtime_non_zero"],
    ["absolute_artifact", "artifact_outside_safe_roots"],
    ["dotdot_artifact", "artifact_outside_safe_roots"],
    ["symlink_artifact_file", "artifact_symlink"],
    ["symlink_artifact_dir", "artifact_symlink"],
    ["digest_mismatch", "artifact_digest_mismatch"],
    ["claim_extra_authority", "authority_violation"],
    ["fail_status", "prompt_not_accepted"],
  ])("fails closed on %s with %s", async (mode, code) => {
    const root = workspace();
    trust(root);
    const { envelope } = await run(root, { allowSpawn: true, inputs: { fixture_mode: mode } });
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: code,
      artifacts: [],
    });
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.verified).toBe(true);
    expect(await verifyAll(root)).toBe(true);
  });

  it("lists undeclared outputs without promoting them", async () => {
    const root = workspace();
    trust(root);
    const { envelope } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "undeclared_file" },
    });
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.dispatch.status).toBe("completed");
    expect(attempt?.dispatch.undeclared_outputs).toEqual(["extra.txt"]);
    expect(attempt?.dispatch.artifacts.map((a) => a.path)).toEqual(["evidence.txt"]);
  });
});

function setLimits(root: string, limits: string): void {
  const file = join(root, "adapters", "fake-local.yaml");
  writeFileSync(
    file,
    readFileSync(file, "utf8").replace(/limits:\n( {2}.*\n)+/, `limits:\n${limits}`),
  );
  trust(root);
}

describe("adapter dispatch: process supervision", () => {
  it("kills a child that ignores SIGTERM within the grace period", async () => {
    const root = workspace();
    setLimits(root, "  timeout_ms: 300\n  grace_ms: 400\n");
    const started = Date.now();
    const { envelope } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "ignore_sigterm" },
    });
    expect(Date.now() - started).toBeLessThan(2000 + 300);
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "runtime_timeout",
    });
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.dispatch.process).toMatchObject({
      timed_out: true,
      signal: "SIGKILL",
      kill_escalated: true,
      orphans_detected: false,
    });
  });

  it("kills the grandchild with the group", async () => {
    const root = workspace();
    setLimits(root, "  timeout_ms: 500\n  grace_ms: 200\n");
    const { envelope } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "spawn_grandchild_sleep" },
    });
    expect(dispatchOf(envelope).failure_code).toBe("runtime_timeout");
    const pid = Number(
      readFileSync(
        join(root, ".runx", "runs", envelope.run_id, "dispatch", "dispatch", "1", "grandchild.pid"),
        "utf8",
      ),
    );
    // Gone, or a zombie waiting for a container init that does not reap: either way not running.
    let state = "gone";
    try {
      state = /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "gone";
    } catch {
      state = "gone";
    }
    expect(["gone", "Z", "X"]).toContain(state);
  });

  it("truncates logs at a line boundary with a marker and kills a flood", async () => {
    const root = workspace();
    setLimits(
      root,
      "  timeout_ms: 10000\n  grace_ms: 200\n  max_stdout_bytes: 1000\n  max_stderr_bytes: 1000\n  hard_output_bytes: 200000\n",
    );
    const { envelope } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "noisy_stdout:5000" },
    });
    const [attempt] = await attempts(root, envelope.run_id);
    const log = attempt?.dispatch.logs.find((l) => l.stream === "stdout");
    expect(log).toMatchObject({ truncated: true });
    expect(log!.bytes_total).toBeGreaterThanOrEqual(5000);
    const text = readFileSync(join(root, log!.path), "utf8");
    expect(text).toMatch(/\n\[runx: output truncated: \d+ of \d+ bytes retained\]\n$/);
    expect(Buffer.byteLength(text)).toBeLessThan(1100);
    const flood = await run(root, { allowSpawn: true, inputs: { fixture_mode: "flood" } });
    expect(dispatchOf(flood.envelope).failure_code).toBe("output_limit_exceeded");
  });

  it("cancels a running dispatch from another runtime", async () => {
    const root = workspace();
    trust(root);
    const running = run(root, { allowSpawn: true, inputs: { fixture_mode: "sleep" } });
    const deadline = Date.now() + 10_000;
    let runId: string | undefined;
    while (runId === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const runs = join(root, ".runx", "runs");
      runId = existsSync(runs)
        ? readdirSync(runs).find((r) =>
            existsSync(join(runs, r, "dispatch", "dispatch", "1", "sentinel")),
          )
        : undefined;
    }
    const runtime = adapterRuntime(root);
    try {
      runtime.adapters.cancel(runId!);
    } finally {
      runtime.close();
    }
    const { envelope } = await running;
    expect(dispatchOf(envelope)).toMatchObject({ status: "cancelled", failure_code: "cancelled" });
    expect(envelope.closure?.disposition).toBe("killed");
  });
});

describe("adapter dispatch: static boundary", () => {
  it("only the process supervisor imports child-process APIs, and the adapters import no network module", () => {
    const src = join(__dirname, "..");
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const abs = join(dir, entry.name);
        if (entry.isDirectory()) {
          // Generated validators and test kits are not runtime code.
          if (!["generated", "testing", "test-support"].includes(entry.name)) walk(abs);
          continue;
        }
        if (!/\.(ts|mjs)$/.test(entry.name) || entry.name.endsWith(".test.ts")) continue;
        const text = readFileSync(abs, "utf8");
        if (
          /from "(node:)?child_process"/.test(text) &&
          !abs.endsWith(join("process", "supervise.ts"))
        )
          offenders.push(abs);
        if (
          abs.includes(`${join("src", "adapters")}`) &&
          /from "(node:)?(http|https|net|dgram|tls)"/.test(text)
        )
          offenders.push(abs);
      }
    };
    walk(src);
    expect(offenders).toEqual([]);
    const fake = readFileSync(
      join(__dirname, "..", "..", "fixtures", "adapters", "fake-local", "fake-local.mjs"),
      "utf8",
    );
    expect(fake).not.toMatch(/node:(http|https|net|dgram|tls)|fetch\(|homedir|os"/);
  });
});

async function resume(
  root: string,
  runId: string,
  document: unknown,
  opts: { allowSpawn?: boolean } = {},
): Promise<{ envelope: SkillRunEnvelope; spawns: number }> {
  let spawns = 0;
  const runtime = adapterRuntime(root, { onAdapterSpawn: () => (spawns += 1) });
  try {
    const envelope = await runtime.resumeWith({
      runId,
      document,
      ...(opts.allowSpawn === true ? { allowSpawn: true } : {}),
    });
    return { envelope, spawns };
  } finally {
    runtime.close();
  }
}

/** Writes `adapters/<id>.yaml`: fake-local's definition with another id and argv. */
function writeDefinition(root: string, id: string, argv: string): void {
  writeFileSync(
    join(root, "adapters", `${id}.yaml`),
    readFileSync(join(root, "adapters", "fake-local.yaml"), "utf8")
      .replace("id: fake-local", `id: ${id}`)
      .replace(/argv: \[.*\]/, `argv: ${argv}`),
  );
}

describe("adapter trust: payload outside the workspace (A.7)", () => {
  it.each([
    ["direct", "[node, ../../OUTSIDE/run.mjs]", "lies outside the workspace"],
    ["file-link", "[node, ./link.mjs]", "through a symlink"],
    ["dir-link", "[node, ./linkdir/run.mjs]", "through a symlink"],
    ["import", "[node, ./imports-outside.mjs]", "lies outside the workspace"],
  ])("refuses a %s payload at trust time and at dispatch", async (id, argv, reason) => {
    const root = workspace();
    const outside = join(root, "..", `${root.split("/").pop()}-outside`);
    track(outside);
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "run.mjs"), "process.exit(0);\n");
    symlinkSync(join(outside, "run.mjs"), join(root, "adapters", "link.mjs"));
    symlinkSync(outside, join(root, "adapters", "linkdir"));
    writeFileSync(
      join(root, "adapters", "imports-outside.mjs"),
      `import "../../${outside.split("/").pop()}/run.mjs";\n`,
    );
    writeDefinition(root, id, argv.replace("OUTSIDE", outside.split("/").pop()!));
    const runtime = adapterRuntime(root);
    try {
      let refusal: unknown;
      try {
        runtime.adapters.trust(id);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toMatchObject({
        code: "POLICY_DENIED",
        details: expect.objectContaining({ failure_code: "adapter_config_invalid" }),
      });
      expect((refusal as Error).message).toContain(reason);
    } finally {
      runtime.close();
    }
    const trustFile = join(root, ".runx", "adapters", "trust.json");
    expect(existsSync(trustFile) ? readFileSync(trustFile, "utf8") : "").not.toContain(`"${id}"`);
    writeAdapterSkill(root, id, { adapter: id });
    const envelope = await expectRefusal(root, "adapter_config_invalid", { skill: id });
    expect(envelope.closure?.summary).toContain(reason);
  });
});

describe("adapter admission: credentials (A.11)", () => {
  it("refuses a credential the adapter definition is not granted, even within its maximum and the ceiling", async () => {
    const root = workspace();
    const file = join(root, "adapters", "fake-local.yaml");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        '"credentials:FAKE_TOKEN"]',
        '"credentials:FAKE_TOKEN", "credentials:OTHER_TOKEN"]',
      ),
    );
    trust(root);
    writeAdapterSkill(root, "other", {
      authority: ["read_only", "credentials:OTHER_TOKEN"],
      ceiling: ["read_only", "credentials:OTHER_TOKEN"],
    });
    const envelope = await expectRefusal(root, "credential_not_granted", {
      skill: "other",
      secretEnv: ["OTHER_TOKEN"],
      env: { OTHER_TOKEN: "tok_other_value_123" },
    });
    expect(envelope.closure?.summary).toContain("OTHER_TOKEN");
  });
});

describe("adapter needs_input and resume with answers (H.50-52, G.47)", () => {
  it("surfaces the question, refuses a bad answer, and an answer alone never spawns", async () => {
    const root = workspace();
    trust(root);
    const { envelope: paused, spawns } = await run(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "needs_input" },
    });
    expect(spawns).toBe(1);
    expect(paused.status).toBe("needs_agent");
    expect(paused.requests).toEqual([
      expect.objectContaining({
        id: "adapter.dispatch.input",
        kind: "agent_act",
        invocation: expect.objectContaining({
          questions: [
            { question_id: "q_scope", prompt: "Which module?", answer_schema: { type: "string" } },
          ],
        }),
      }),
    ]);
    const [first] = await attempts(root, paused.run_id);
    expect(first?.dispatch).toMatchObject({
      status: "blocked",
      failure: null,
      questions: [{ question_id: "q_scope" }],
    });
    expect(first?.verified).toBe(true);
    // The answer must match its schema; a refusal leaves the run paused.
    await expect(
      resume(root, paused.run_id, { answers: { "adapter.dispatch.input": { q_scope: 3 } } }),
    ).rejects.toMatchObject({ code: "ANSWERS_INVALID" });
    // H.52: answered but without --allow-spawn: a new packet, recorded as a dry run.
    const { envelope: dry, spawns: drySpawns } = await resume(root, paused.run_id, {
      answers: { "adapter.dispatch.input": { q_scope: "lib" } },
    });
    expect(drySpawns).toBe(0);
    expect(dispatchOf(dry)).toMatchObject({
      status: "dry_run",
      failure_code: "spawn_authority_missing",
    });
    const [, second] = await attempts(root, paused.run_id);
    expect(second?.dispatch.retry_of).toBe(first?.dispatch.packet_id);
    expect(await verifyAll(root)).toBe(true);
  });

  it("builds a new packet from the answers that needs its own approval; re-dispatch appends a receipt and leaves the first unchanged", async () => {
    const root = workspace();
    trust(root);
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const opts = { skill: "gated", allowSpawn: true, inputs: { fixture_mode: "needs_input" } };
    const { envelope: gate1 } = await run(root, opts);
    expect(gate1.status).toBe("needs_approval");
    const gateId = gate1.requests[0]!.id;
    const { envelope: asked } = await resume(
      root,
      gate1.run_id,
      { approvals: { [gateId]: true } },
      { allowSpawn: true },
    );
    expect(asked.status).toBe("needs_agent");
    const [first] = await attempts(root, gate1.run_id);
    const recordFile = join(root, ".runx", "runs", gate1.run_id, "dispatches", "dispatch-1.json");
    const receiptsDir = join(root, ".runx", "receipts");
    const firstRecord = readFileSync(recordFile, "utf8");
    const firstReceipt = readFileSync(
      join(receiptsDir, `sha256-${first!.receipt_id.slice(7)}.json`),
      "utf8",
    );

    // The answered packet differs from the approved one, so the earlier approval does not carry.
    const { envelope: gate2, spawns: gate2Spawns } = await resume(
      root,
      gate1.run_id,
      { answers: { "adapter.dispatch.input": { q_scope: "lib" } } },
      { allowSpawn: true },
    );
    expect(gate2.status).toBe("needs_approval");
    expect(gate2Spawns).toBe(0);
    const binding = (gate2.requests[0] as { gate: { summary: Record<string, unknown> } }).gate
      .summary;
    expect(binding.packet_digest).not.toBe(first?.dispatch.packet_digest);
    expect(binding.retry_of).toBe(first?.dispatch.packet_id);

    const { envelope: done, spawns } = await resume(
      root,
      gate1.run_id,
      { approvals: { [gate2.requests[0]!.id]: true } },
      { allowSpawn: true },
    );
    expect(spawns).toBe(1);
    expect(dispatchOf(done)).toMatchObject({ status: "completed", failure_code: null });
    const all = await attempts(root, gate1.run_id);
    expect(all.map((a) => [a.dispatch.attempt, a.dispatch.status, a.verified])).toEqual([
      [1, "blocked", true],
      [2, "completed", true],
    ]);
    expect(all[1]?.dispatch.retry_of).toBe(first?.dispatch.packet_id);
    expect(all[1]?.dispatch.approval?.receipt_id).toBe(gate2.receipt_id);
    expect(all[1]?.receipt_id).not.toBe(first?.receipt_id);
    // Append-only: the first attempt's record and receipt are byte for byte as they were.
    expect(readFileSync(recordFile, "utf8")).toBe(firstRecord);
    expect(
      readFileSync(join(receiptsDir, `sha256-${first!.receipt_id.slice(7)}.json`), "utf8"),
    ).toBe(firstReceipt);
    expect(() =>
      writeAttemptRecord(join(root, ".runx"), { receipt_id: "x", dispatch: first!.dispatch }),
    ).toThrow(/EEXIST/);
    expect(await verifyAll(root)).toBe(true);
  });
});
