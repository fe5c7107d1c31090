/**
 * After the gate, beyond dispatch.test.ts: the child's environment,
 * timeouts and truncation on both streams, stdin by digest only, no absolute local path in any
 * log or receipt string, artifact digests, over-size manifests and artifacts, the outside
 * target of a symlinked artifact left alone, and the dispatch receipt for every status (schema,
 * boundary flags, parent commitment, history).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import { hashCanonical, sha256Prefixed } from "../receipts/index.js";
import {
  adapterRuntime,
  attemptsOf,
  dispatchOf,
  dispatchRun,
  expectSealedRefusal,
  storeVerifies,
  trustIn,
  writeAdapterSkill,
  scratchDirs,
} from "./test-support.js";

const { workspace, track } = scratchDirs();

/** Rewrites fake-local's definition and trusts the result. */
function define(root: string, edit: (yaml: string) => string): void {
  const file = join(root, "adapters", "fake-local.yaml");
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  trustIn(root);
}

const withLimits =
  (limits: string) =>
  (yaml: string): string =>
    yaml.replace(/limits:\n( {2}.*\n)+/, `limits:\n${limits}`);

const attemptPath = (runId: string, ...rest: string[]): string[] => [
  ".runx",
  "runs",
  runId,
  "dispatch",
  "dispatch",
  "1",
  ...rest,
];

async function onlyAttempt(root: string, runId: string) {
  const all = await attemptsOf(root, runId);
  expect(all).toHaveLength(1);
  expect(all[0]?.verified).toBe(true);
  return all[0]!;
}

describe("E.24 the child's environment is built from nothing", () => {
  it("delivers PATH, the allowlisted names and the literal values, nothing else; the receipt holds key names only", async () => {
    const root = workspace();
    define(root, (y) => y.replace("allow: []", "allow: [FAKE_ALLOWED]"));
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "env_probe" },
      env: { FAKE_ALLOWED: "allowed-value-7", PARENT_SECRET: "hunter2hunter2" },
    });
    expect(dispatchOf(envelope).status).toBe("completed");
    const out = join(root, ...attemptPath(envelope.run_id, "out"));
    const names = readFileSync(join(out, "env.txt"), "utf8").trim().split("\n");
    expect(names).toEqual([
      "FAKE_ALLOWED",
      "FAKE_LOCAL_GREETING",
      "PATH",
      "RUNX_ADAPTER_OUT_DIR",
      "RUNX_ADAPTER_PACKET_ID",
      "RUNX_ADAPTER_RUN_ID",
      "RUNX_ADAPTER_TIMEOUT_MS",
    ]);
    expect(readFileSync(join(out, "values.txt"), "utf8")).toBe(
      "FAKE_LOCAL_GREETING=hello\nFAKE_ALLOWED=allowed-value-7\n",
    );
    const attempt = await onlyAttempt(root, envelope.run_id);
    expect(attempt.dispatch.process.env_keys).toEqual(names);
    const recorded = JSON.stringify(attempt.dispatch);
    for (const value of ["hunter2", "allowed-value-7", "=hello"])
      expect(recorded).not.toContain(value);
  });

  it("an allowlisted name missing from the environment is missing_configuration, refused before spawn", async () => {
    const root = workspace();
    define(root, (y) => y.replace("allow: []", "allow: [FAKE_ALLOWED]"));
    const { envelope } = await expectSealedRefusal(root, "missing_configuration");
    expect(envelope.closure?.summary).toContain("FAKE_ALLOWED");
  });
});

describe("E.26/E.28/E.30 supervision", () => {
  it("a sleeping child past its timeout is runtime_timeout, stopped by SIGTERM without escalation", async () => {
    const root = workspace();
    define(root, withLimits("  timeout_ms: 300\n  grace_ms: 2000\n"));
    const started = Date.now();
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "sleep" },
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "runtime_timeout",
    });
    const attempt = await onlyAttempt(root, envelope.run_id);
    expect(attempt.dispatch.process).toMatchObject({
      timed_out: true,
      signal: "SIGTERM",
      kill_escalated: false,
      exit_code: null,
      orphans_detected: false,
      kill_method: "process_group",
    });
  });

  it("the grandchild dies with the group and no orphan is recorded", async () => {
    const root = workspace();
    define(root, withLimits("  timeout_ms: 500\n  grace_ms: 200\n"));
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "spawn_grandchild_sleep" },
    });
    const attempt = await onlyAttempt(root, envelope.run_id);
    expect(attempt.dispatch.failure?.code).toBe("runtime_timeout");
    expect(attempt.dispatch.process.orphans_detected).toBe(false);
    const pid = Number(
      readFileSync(join(root, ...attemptPath(envelope.run_id, "grandchild.pid")), "utf8"),
    );
    let state = "gone";
    try {
      state = /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "gone";
    } catch {
      state = "gone";
    }
    expect(["gone", "Z", "X"]).toContain(state);
  });

  it("stderr is cut at a line boundary with a marker too, and both byte counts are recorded", async () => {
    const root = workspace();
    define(
      root,
      withLimits(
        "  timeout_ms: 10000\n  grace_ms: 200\n  max_stdout_bytes: 1000\n  max_stderr_bytes: 1000\n  hard_output_bytes: 200000\n",
      ),
    );
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "noisy_stderr:5000" },
    });
    expect(dispatchOf(envelope).status).toBe("completed");
    const attempt = await onlyAttempt(root, envelope.run_id);
    const [stdout, stderr] = attempt.dispatch.logs;
    expect(stdout).toMatchObject({ stream: "stdout", bytes_total: 0, truncated: false });
    expect(stderr).toMatchObject({ stream: "stderr", truncated: true });
    expect(stderr!.bytes_total).toBeGreaterThanOrEqual(5000);
    const text = readFileSync(join(root, stderr!.path), "utf8");
    expect(Buffer.byteLength(text)).toBe(stderr!.bytes_retained);
    expect(sha256Prefixed(text)).toBe(stderr!.sha256);
    const [kept, marker] = text.split(/(?=\[runx: output truncated)/);
    expect(kept!.endsWith("\n")).toBe(true);
    expect(Buffer.byteLength(kept!)).toBeLessThanOrEqual(1000);
    expect(marker).toBe(
      `[runx: output truncated: ${Buffer.byteLength(kept!)} of ${stderr!.bytes_total} bytes retained]\n`,
    );
  });
});

describe("E.32 stdin", () => {
  it("delivers the packet on stdin and records only its digest, never the objective text", async () => {
    const root = workspace();
    trustIn(root);
    const objective = "Summarize the README for the quarterly-zebra-7731 review";
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete", objective },
    });
    expect(dispatchOf(envelope).status).toBe("completed");
    // Delivered: the adapter's evidence is built from the packet it read on stdin.
    const out = join(root, ...attemptPath(envelope.run_id, "out"));
    expect(readFileSync(join(out, "evidence.txt"), "utf8")).toContain(objective);
    const packet = readFileSync(join(root, ...attemptPath(envelope.run_id, "packet.json")), "utf8");
    const attempt = await onlyAttempt(root, envelope.run_id);
    expect(attempt.dispatch.process.stdin_digest).toBe(sha256Prefixed(packet.trimEnd()));
    const receipts = join(root, ".runx", "receipts");
    const stored = [
      JSON.stringify(attempt.dispatch),
      ...readdirSync(receipts).map((f) => readFileSync(join(receipts, f), "utf8")),
    ].join("\n");
    expect(stored).not.toContain("quarterly-zebra-7731");
  });
});

/** Every string anywhere in a JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === "object" && value !== null)
    return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

describe("E.33 no absolute local path in any log or receipt string", () => {
  it("the workspace root, the home directory and the temp directory are redacted everywhere", async () => {
    const root = workspace();
    const home = `${root}-home`;
    track(home);
    mkdirSync(home);
    // The adapter is an installed tool named by absolute path, its probe too.
    define(root, (y) =>
      y
        .replace("allow: []", "allow: [FAKE_ALLOWED]")
        .replace(
          "argv: [node, ./fake-local/fake-local.mjs]",
          `argv: ["${process.execPath}", ./fake-local/fake-local.mjs]`,
        )
        .replace("argv: [node, --version]", `argv: ["${process.execPath}", --version]`),
    );
    const env = { HOME: home, FAKE_ALLOWED: `${home}/projects/private` };
    const runs = [
      await dispatchRun(root, { allowSpawn: true, env, inputs: { fixture_mode: "path_echo" } }),
      await dispatchRun(root, { allowSpawn: true, env, inputs: { fixture_mode: "secret_echo" } }),
      await dispatchRun(root, {
        allowSpawn: true,
        env,
        inputs: { fixture_mode: "exit0_no_manifest" },
      }),
      await dispatchRun(root, { allowSpawn: false, env, inputs: { fixture_mode: "complete" } }),
    ];
    expect(runs.map((r) => dispatchOf(r.envelope).status)).toEqual([
      "completed",
      "completed",
      "failed",
      "dry_run",
    ]);
    const texts: Array<[string, string]> = [];
    for (const { envelope } of runs) {
      const attempt = await onlyAttempt(root, envelope.run_id);
      expect(attempt.dispatch.process.argv_redacted[0]).toBe("node");
      texts.push(...strings(attempt.dispatch).map((s): [string, string] => ["dispatch", s]));
      for (const log of attempt.dispatch.logs)
        texts.push([log.path, readFileSync(join(root, log.path), "utf8")]);
      texts.push(...strings(envelope).map((s): [string, string] => ["envelope", s]));
    }
    const receipts = join(root, ".runx", "receipts");
    for (const f of readdirSync(receipts)) {
      const text = readFileSync(join(receipts, f), "utf8");
      // The store's index is JSON lines; every other file is one JSON document.
      const docs = f.endsWith(".jsonl")
        ? text
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line) as unknown)
        : [JSON.parse(text) as unknown];
      for (const doc of docs) texts.push(...strings(doc).map((s): [string, string] => [f, s]));
    }
    // The logs really did carry local paths before redaction, so the check below can fail.
    const first = await onlyAttempt(root, runs[0]!.envelope.run_id);
    const log = readFileSync(join(root, first.dispatch.logs[0]!.path), "utf8");
    expect(log).toContain("cwd=<workspace>/.runx/runs/");
    expect(log).toContain("echoed=<home>/projects/private");
    expect(first.dispatch.summary).toContain("<home>/projects/private");
    const offenders = texts.filter(
      ([, text]) =>
        text.includes(root) ||
        text.includes(home) ||
        text.includes(tmpdir()) ||
        text.includes(process.execPath) ||
        /(^|[\s="'(])\/(?:tmp|home|root|usr|etc|var|Users)\//.test(text),
    );
    expect(offenders).toEqual([]);
  });
});

describe("F.34/F.36/F.38/F.39 manifest and artifacts", () => {
  it("the golden path records the recomputed digest and size of each artifact and of the manifest", async () => {
    const root = workspace();
    trustIn(root);
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    const out = join(root, ...attemptPath(envelope.run_id, "out"));
    const evidence = readFileSync(join(out, "evidence.txt"));
    const attempt = await onlyAttempt(root, envelope.run_id);
    expect(attempt.dispatch.artifacts).toEqual([
      {
        role: "evidence",
        path: "evidence.txt",
        sha256: sha256Prefixed(evidence),
        bytes: evidence.length,
      },
    ]);
    expect(attempt.dispatch.output_manifest).toEqual({
      path: `${attemptPath(envelope.run_id).join("/")}/out/adapter-output-manifest.json`,
      sha256: sha256Prefixed(readFileSync(join(out, "adapter-output-manifest.json"))),
      status: "completed",
    });
    expect(dispatchOf(envelope).artifacts).toEqual(attempt.dispatch.artifacts);
  });

  it("an over-size manifest is manifest_invalid", async () => {
    const root = workspace();
    define(root, withLimits("  timeout_ms: 20000\n  grace_ms: 500\n  max_manifest_bytes: 64\n"));
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "manifest_invalid",
      artifacts: [],
    });
    expect(envelope.closure?.summary).toContain("the limit is 64");
  });

  it.each([
    [
      "one artifact over max_artifact_bytes",
      "  max_artifact_bytes: 1024\n",
      "oversized_artifact:2048",
    ],
    [
      "the total over max_total_artifact_bytes",
      "  max_artifact_bytes: 4096\n  max_total_artifact_bytes: 1024\n",
      "oversized_artifact:2048",
    ],
    ["more artifacts than max_artifacts", "  max_artifacts: 1\n", "env_probe"],
  ])("%s is artifact_too_large", async (_what, limit, mode) => {
    const root = workspace();
    define(root, withLimits(`  timeout_ms: 20000\n  grace_ms: 500\n${limit}`));
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: mode },
    });
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "artifact_too_large",
      artifacts: [],
    });
    expect((await onlyAttempt(root, envelope.run_id)).dispatch.artifacts).toEqual([]);
  });

  it.each([
    ["a symlinked artifact file", "symlink_artifact_file:OUTSIDE", "artifact_symlink"],
    ["a symlinked artifact directory", "symlink_artifact_dir", "artifact_symlink"],
    ["a .. artifact", "dotdot_artifact", "artifact_outside_safe_roots"],
  ])("%s is refused and its target outside the out dir is unchanged", async (_what, mode, code) => {
    const root = workspace();
    trustIn(root);
    const outside = join(`${root}-outside`, "target.txt");
    track(`${root}-outside`);
    mkdirSync(`${root}-outside`);
    writeFileSync(outside, "outside content\n");
    const before = { text: readFileSync(outside, "utf8"), mtime: statSync(outside).mtimeMs };
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: mode.replace("OUTSIDE", outside) },
    });
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: code,
      artifacts: [],
    });
    expect({ text: readFileSync(outside, "utf8"), mtime: statSync(outside).mtimeMs }).toEqual(
      before,
    );
    // The packet the `..` and directory cases point at is the attempt's own, also unchanged.
    const packet = join(root, ...attemptPath(envelope.run_id, "packet.json"));
    expect(JSON.parse(readFileSync(packet, "utf8"))).toMatchObject({
      fixture_mode: mode.replace("OUTSIDE", outside),
    });
    expect((await onlyAttempt(root, envelope.run_id)).dispatch.artifacts).toEqual([]);
  });
});

describe("G.44/G.46/G.48/G.49 the dispatch receipt for every status", () => {
  it("validates against its schema, keeps the boundary flags, is committed by its parent and is in history", async () => {
    const root = workspace();
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const refused = await dispatchRun(root, { allowSpawn: true }); // not trusted yet
    trustIn(root);
    const runs = [
      refused,
      await dispatchRun(root, { inputs: { fixture_mode: "complete" } }),
      await dispatchRun(root, { allowSpawn: true, inputs: { fixture_mode: "complete" } }),
      await dispatchRun(root, { allowSpawn: true, inputs: { fixture_mode: "needs_input" } }),
      await dispatchRun(root, { allowSpawn: true, inputs: { fixture_mode: "blocked" } }),
      await dispatchRun(root, { allowSpawn: true, inputs: { fixture_mode: "fail_status" } }),
    ];
    const abort = new AbortController();
    const cancelled = dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "sleep" },
      signal: abort.signal,
    });
    await new Promise((r) => setTimeout(r, 800));
    abort.abort();
    runs.push(await cancelled);

    const seen: Array<[string, string | null]> = [];
    for (const { envelope } of runs) {
      const attempt = await onlyAttempt(root, envelope.run_id);
      const body = attempt.dispatch;
      seen.push([body.status, body.failure?.code ?? null]);
      expect(
        validateAdaptersDispatchReceipt(body),
        JSON.stringify(validateAdaptersDispatchReceipt.errors),
      ).toBe(true);
      expect(body.boundary).toEqual({
        proves_handoff_only: true,
        not_approval: true,
        not_correctness: true,
      });
      expect(body.process.process_boundary).toBe("trusted_host_process");
      // The child receipt commits the document; the step receipt commits the child by id and digest.
      const child = JSON.parse(
        readFileSync(
          join(root, ".runx", "receipts", `sha256-${attempt.receipt_id.slice(7)}.json`),
          "utf8",
        ),
      ) as {
        id: string;
        digest: string;
        acts: Array<{ commitments?: Array<{ kind?: string; digest?: string }> }>;
      };
      expect(JSON.stringify(child)).toContain(hashCanonical(body));
      if (envelope.status === "sealed") {
        const parent = JSON.parse(
          readFileSync(
            join(root, ".runx", "receipts", `sha256-${envelope.receipt_id!.slice(7)}.json`),
            "utf8",
          ),
        ) as { lineage: { children: Array<{ uri: string; locator: string }> } };
        expect(parent.lineage.children).toEqual([
          expect.objectContaining({ uri: `runx:receipt:${child.id}`, locator: child.digest }),
        ]);
      }
    }
    expect(seen).toEqual([
      ["rejected", "adapter_not_trusted"],
      ["dry_run", "spawn_authority_missing"],
      ["completed", null],
      ["blocked", null],
      ["blocked", "runtime_blocked"],
      ["failed", "prompt_not_accepted"],
      ["cancelled", "cancelled"],
    ]);
    // History lists the refused and the dry-run runs with their step receipts, and every
    // dispatch receipt is in the store.
    const runtime = adapterRuntime(root);
    try {
      const history = await runtime.history({ includeInternal: true, limit: 100 });
      const ids = new Set(history.receipts.map((r) => r.id));
      for (const { envelope } of runs.slice(0, 2)) expect(ids.has(envelope.receipt_id!)).toBe(true);
      for (const { envelope } of runs)
        expect(ids.has((await onlyAttempt(root, envelope.run_id)).receipt_id)).toBe(true);
    } finally {
      runtime.close();
    }
    expect(await storeVerifies(root)).toBe(true);
    expect(existsSync(join(root, ".runx", "runs", runs[0]!.envelope.run_id, "dispatch"))).toBe(
      false,
    );
  });
});
