/**
 * The reusable adapter conformance pack (the certification matrix),
 * parameterized by adapter. `describeAdapterConformance(subject)` registers one vitest suite
 * that certifies an adapter wrapper in read-only mode, before it is ever granted
 * `edit_worktree`:
 *
 *  1. golden dry run: a sealed `dry_run` receipt with the adapter's identity and trusted digest,
 *     nothing launched;
 *  2. golden read-only dispatch: completed, artifacts re-digested, no claim beyond the grant,
 *     nothing written outside the run's own directory;
 *  3. refusal matrix: each refusal sealed with its exact code, no spawn, no files written;
 *  4. path matrix: a symlinked definition, a stale output directory, a symlinked run directory;
 *  5. launch gate through an injected probe runner: call counts per refusal;
 *  6. static boundary scan of the adapter's payload closure.
 *
 * Spawn absence is proven by the runtime's spawn spy and by the absence of the attempt
 * directory (the adapter's out dir is created only once the whole gate has passed).
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import type { ProbeRunner } from "../adapters/preflight.js";
import {
  attemptsOf,
  dispatchOf,
  dispatchRun,
  expectSealedRefusal,
  JOURNAL,
  snapshot,
  storeVerifies,
  trustIn,
  writeAdapterSkill,
} from "../adapters/test-support.js";
import { sha256Prefixed } from "../receipts/index.js";
import { loadAdapter, readTrust } from "../adapters/trust.js";

/** The adapter a conformance run certifies. */
export interface ConformanceSubject {
  id: string;
  /** Puts the definition (`<id>.yaml|json`) and its payload into `<root>/adapters`. */
  install(root: string): void;
  lane: string;
  workflow?: string;
  /** Extra step inputs its read-only golden run needs. */
  inputs?: Record<string, unknown>;
  /** What its tool prints for `version` (scripted probes); required when it declares a probe. */
  probeOutput?: (version: string) => string;
}

/** Network, home-directory and sandbox-bypass use in adapter source (the static scan). */
const FORBIDDEN_SOURCE: ReadonlyArray<[string, RegExp]> = [
  [
    "a network module",
    /(?:from\s*|require\(\s*|import\(\s*)["'](?:node:)?(?:http|https|http2|net|tls|dgram|dns|undici|ws|node-fetch|axios|got)(?:\/[^"']*)?["']/,
  ],
  ["fetch", /\bfetch\s*\(/],
  ["a socket API", /\b(?:WebSocket|XMLHttpRequest|EventSource)\b/],
  ["the os module (home directory)", /(?:from\s*|require\(\s*|import\(\s*)["'](?:node:)?os["']/],
  ["a home-directory lookup", /\bhomedir\b|process\.env\.(?:HOME|USERPROFILE)\b|["'`]~\//],
  [
    "a sandbox bypass flag",
    /--dangerously|--yolo\b|--no-sandbox|bypass[-_]?(?:approvals|sandbox)/i,
  ],
];

/** What a static scan of adapter source finds: one line per problem, empty when clean. */
export function scanAdapterSource(file: string, text: string): string[] {
  return FORBIDDEN_SOURCE.filter(([, pattern]) => pattern.test(text)).map(
    ([what]) => `${file} uses ${what}`,
  );
}

/** Registers the conformance suite for `subject`. */
export function describeAdapterConformance(subject: ConformanceSubject): void {
  const roots: string[] = [];
  const cleanup = (): void => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  };

  /** A fresh workspace with the subject installed (trusted unless told otherwise). */
  function workspace(trusted = true): string {
    const root = realpathSync(mkdtempSync(join(tmpdir(), `runx-conformance-${subject.id}-`)));
    roots.push(root);
    mkdirSync(join(root, "adapters"), { recursive: true });
    subject.install(root);
    writeAdapterSkill(root, "dispatch", {
      adapter: subject.id,
      lane: subject.lane,
      ...(subject.workflow !== undefined ? { workflow: subject.workflow } : {}),
      authority: ["read_only"],
    });
    if (trusted) trustIn(root, subject.id);
    return root;
  }

  const inputs = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    ...subject.inputs,
    ...extra,
  });

  describe(`adapter conformance: ${subject.id} (read-only)`, () => {
    afterEach(cleanup);

    it("1. golden dry run: a sealed dry_run receipt naming the adapter and its trusted digest; nothing launched", async () => {
      const root = workspace();
      const { attempt } = await expectSealedRefusal(root, "spawn_authority_missing", {
        allowSpawn: false,
        status: "dry_run",
        inputs: inputs(),
      });
      const body = attempt.dispatch;
      expect(validateAdaptersDispatchReceipt(body)).toBe(true);
      // Runtime selection: the trusted values are copied into the receipt.
      const trust = readTrust(join(root, ".runx"))[subject.id];
      const loaded = loadAdapter(root, subject.id);
      expect(body).toMatchObject({
        adapter_id: subject.id,
        runtime_backend: subject.id,
        adapter: { id: subject.id, definition_digest: trust?.definition_digest },
        limits: loaded.definition.limits,
        authority: expect.objectContaining({
          granted: expect.arrayContaining(["read_only", "commit_forbidden", "push_forbidden"]),
          network_declared: loaded.definition.network,
        }),
        process: expect.objectContaining({ spawned: false, env_keys: [], credential_refs: [] }),
        boundary: { proves_handoff_only: true, not_approval: true, not_correctness: true },
      });
    });

    it("2. golden read-only dispatch: completed, artifacts re-digested, no claim beyond the grant, nothing written outside its run", async () => {
      const root = workspace();
      const before = snapshot(root, [...JOURNAL, ".runx/runs"]);
      const { envelope, spawns } = await dispatchRun(root, { allowSpawn: true, inputs: inputs() });
      expect(spawns).toBe(1);
      expect(dispatchOf(envelope)).toMatchObject({ status: "completed", failure_code: null });
      const [attempt, ...more] = await attemptsOf(root, envelope.run_id);
      expect(more).toEqual([]);
      expect(attempt?.verified).toBe(true);
      const body = attempt!.dispatch;
      expect(validateAdaptersDispatchReceipt(body)).toBe(true);
      expect(body.artifacts.length).toBeGreaterThan(0);
      const out = join(root, ".runx", "runs", envelope.run_id, "dispatch", "dispatch", "1", "out");
      for (const artifact of body.artifacts) {
        const bytes = readFileSync(join(out, artifact.path));
        expect(artifact).toMatchObject({ sha256: sha256Prefixed(bytes), bytes: bytes.length });
      }
      expect(body.authority.violations).toEqual([]);
      for (const word of body.authority.claimed_used)
        expect(body.authority.granted).toContain(word);
      expect(body.authority.claimed_used).not.toContain("network_allowed");
      expect(body.process).toMatchObject({ spawned: true, exit_code: 0, credential_refs: [] });
      // The hand-off is recorded by digest only: no objective or prompt text in the receipt.
      const given = inputs().objective;
      const objective = typeof given === "string" ? given : "Summarize the README";
      expect(JSON.stringify(body)).not.toContain(objective);
      if (loadAdapter(root, subject.id).definition.command.stdin !== "none")
        expect(body.process.stdin_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(body.process.cwd_ref).toBe(`.runx/runs/${envelope.run_id}/dispatch/dispatch/1/out`);
      expect(snapshot(root, [...JOURNAL, ".runx/runs"])).toEqual(before);
      expect(await storeVerifies(root)).toBe(true);
    });

    it.each<
      [
        string,
        string,
        { inputs?: Record<string, unknown>; skill?: Parameters<typeof writeAdapterSkill>[2] },
      ]
    >([
      ["missing objective", "package_not_executable", { inputs: { objective: "" } }],
      [
        "missing acceptance criteria",
        "package_not_executable",
        { inputs: { acceptance_criteria: [] } },
      ],
      ["missing verification", "package_not_executable", { inputs: { verification: [] } }],
      [
        "a blocking question",
        "package_not_executable",
        { inputs: { open_questions: [{ question_id: "q1", text: "which?", blocking: true }] } },
      ],
      [
        "a commit policy other than commit_forbidden",
        "package_not_executable",
        { skill: { commitPolicy: "commit_allowed" } },
      ],
      [
        "an unknown authority word",
        "package_not_executable",
        { skill: { authority: ["read_only", "sudo"] } },
      ],
      ["an unsupported lane", "unsupported_lane", { skill: { lane: "no-such-lane" } }],
      ["an unsupported workflow", "unsupported_lane", { skill: { workflow: "no-such-workflow" } }],
      [
        "authority above the policy ceiling",
        "unsafe_scope",
        { skill: { authority: ["edit_worktree"] } },
      ],
      [
        "network above the policy ceiling",
        "unsafe_scope",
        { skill: { authority: ["network_allowed"] } },
      ],
    ])(
      "3. refusal matrix: %s → %s, sealed, nothing spawned or written",
      async (_case, code, opts) => {
        const root = workspace();
        writeAdapterSkill(root, "case", {
          adapter: subject.id,
          lane: subject.lane,
          ...(subject.workflow !== undefined ? { workflow: subject.workflow } : {}),
          authority: ["read_only"],
          ...opts.skill,
        });
        await expectSealedRefusal(root, code, { skill: "case", inputs: inputs(opts.inputs) });
      },
    );

    it("3. refusal matrix: untrusted, and edited since trusted", async () => {
      const untrusted = workspace(false);
      await expectSealedRefusal(untrusted, "adapter_not_trusted", { inputs: inputs() });
      const root = workspace();
      const file = join(root, loadAdapter(root, subject.id).file);
      if (file.endsWith(".json"))
        writeFileSync(file, `${readFileSync(file, "utf8").trimEnd()}\n\n`);
      else appendFileSync(file, "# edited\n");
      await expectSealedRefusal(root, "adapter_digest_mismatch", { inputs: inputs() });
    });

    it("4. path matrix: a symlinked definition, a stale output directory, a symlinked run directory", async () => {
      const linked = workspace();
      const file = join(linked, loadAdapter(linked, subject.id).file);
      renameSync(file, `${file}.real`);
      symlinkSync(`${file}.real`, file);
      await expectSealedRefusal(linked, "adapter_config_invalid", { inputs: inputs() });

      const fixed = { randomHex: (n: number) => "cd".repeat(n) };
      const run = `run_dispatch_${"cd".repeat(8)}`;
      const stale = workspace();
      mkdirSync(join(stale, ".runx", "runs", run, "dispatch", "dispatch", "1"), {
        recursive: true,
      });
      const a = await dispatchRun(stale, { allowSpawn: true, runtime: fixed, inputs: inputs() });
      expect([a.envelope.run_id, dispatchOf(a.envelope).failure_code, a.spawns]).toEqual([
        run,
        "path_unsafe",
        0,
      ]);

      const redirected = workspace();
      const target = `${redirected}-target`;
      roots.push(target);
      mkdirSync(target);
      mkdirSync(join(redirected, ".runx", "runs"), { recursive: true });
      symlinkSync(target, join(redirected, ".runx", "runs", run));
      const b = await dispatchRun(redirected, {
        allowSpawn: true,
        runtime: fixed,
        inputs: inputs(),
      });
      expect([dispatchOf(b.envelope).failure_code, b.spawns]).toEqual(["path_unsafe", 0]);
      // Nothing at the link's target: no attempt directory and no record.
      expect(readdirSync(target)).toEqual([]);
    });

    it("5. launch gate with an injected probe runner: no flag → no calls; each tool refusal after exactly one", async () => {
      const root = workspace();
      const probe = loadAdapter(root, subject.id).definition.tool_probe;
      const calls: string[] = [];
      const answer = { value: null as { exitCode: number | null; stdout: string } | null };
      const runner: ProbeRunner = (argv) => {
        calls.push(argv.join(" "));
        return Promise.resolve(answer.value);
      };
      await expectSealedRefusal(root, "spawn_authority_missing", {
        allowSpawn: false,
        status: "dry_run",
        probe: runner,
        inputs: inputs(),
      });
      expect(calls).toEqual([]);
      if (probe === null) return;
      if (subject.probeOutput === undefined)
        throw new Error(`${subject.id} declares a tool probe: give probeOutput`);
      const [major = 0, minor = 0, patch = 0] = probe.min_version.split(/[.-]/).map(Number);
      const older =
        patch > 0
          ? `${major}.${minor}.${patch - 1}`
          : minor > 0
            ? `${major}.${minor - 1}.99`
            : major > 0
              ? `${major - 1}.99.99`
              : null;
      const cases: Array<[string, { exitCode: number | null; stdout: string } | null]> = [
        ["missing_tool", null],
        ["tool_version_unsupported", { exitCode: 0, stdout: "no version here\n" }],
        [
          "tool_version_unsupported",
          { exitCode: 0, stdout: subject.probeOutput(`${major}.${minor}.${patch}-rc.1`) },
        ],
        [
          "tool_version_unsupported",
          { exitCode: 0, stdout: subject.probeOutput(`${major + 1}.0.0rc1`) },
        ],
        ...(older !== null
          ? [
              ["tool_version_unsupported", { exitCode: 0, stdout: subject.probeOutput(older) }] as [
                string,
                { exitCode: number; stdout: string },
              ],
            ]
          : []),
      ];
      for (const [code, value] of cases) {
        const fresh = workspace();
        calls.length = 0;
        answer.value = value;
        await expectSealedRefusal(fresh, code, { probe: runner, inputs: inputs() });
        expect(calls).toEqual([probe.argv.join(" ")]);
      }
    });

    it("6. static boundary scan of the payload closure: no network, no home directory, no sandbox bypass", () => {
      const root = workspace();
      const loaded = loadAdapter(root, subject.id);
      const problems = [loaded.file, ...loaded.payloadFiles].flatMap((file) =>
        scanAdapterSource(file, readFileSync(join(root, file), "utf8")),
      );
      expect(problems).toEqual([]);
      expect(loaded.definition.network).toBe("none");
    });
  });
}
