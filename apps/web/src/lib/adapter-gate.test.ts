import { describe, expect, it } from "vitest";
import { adapterGateRows, adapterQuestions, bytesText } from "./adapter-gate";
import { attemptNote } from "./dispatch-view";

const BINDING = {
  packet_digest: "sha256:packet",
  packet_id: "pkt_2",
  created_at: "2026-11-30T00:00:00Z",
  retry_of: "pkt_1",
  adapter_id: "fake-local",
  definition_digest: "sha256:definition",
  authority_requested: ["read_only", "credentials:FAKE_TOKEN"],
  authority_granted: ["commit_forbidden", "credentials:FAKE_TOKEN", "read_only"],
  workspace: { worktree_ref: "wt/one", branch: "feat/x", base_commit: "abc123" },
  limits: {
    timeout_ms: 20000,
    grace_ms: 500,
    max_stdout_bytes: 262144,
    max_stderr_bytes: 262144,
    hard_output_bytes: 2097152,
    max_manifest_bytes: 65536,
    max_artifacts: 64,
    max_artifact_bytes: 10485760,
    max_total_artifact_bytes: 52428800,
  },
  network: "required",
  credential_refs: ["FAKE_TOKEN"],
  expires_at: "2026-11-30T01:00:00Z",
};

describe("adapterGateRows", () => {
  it("shows everything the approval binds, network as declared only, and who granted spawn", () => {
    const rows = Object.fromEntries(
      adapterGateRows(BINDING, "grace").map((r) => [r.label, r.value]),
    );
    expect(rows).toEqual({
      Adapter: "fake-local",
      "Adapter digest": "sha256:definition",
      "Packet digest": "sha256:packet",
      Packet: "pkt_2 (answers to pkt_1)",
      "Authority requested": "read_only, credentials:FAKE_TOKEN",
      "Authority granted": "commit_forbidden, credentials:FAKE_TOKEN, read_only",
      Network: "required (declared by the adapter; not enforced)",
      Credentials: "FAKE_TOKEN",
      Limits:
        "timeout 20 s; grace 500 ms; stdout 256 KiB; stderr 256 KiB; output hard cap 2 MiB; artifacts 64 × 10 MiB (50 MiB total)",
      Workspace: "worktree wt/one, branch feat/x, base commit abc123",
      "Approval expires": "2026-11-30T01:00:00Z",
      "Spawn authority": "granted by grace when starting the run",
    });
  });

  it("says plainly when nothing launches and when no worktree is used", () => {
    const rows = Object.fromEntries(
      adapterGateRows({ ...BINDING, retry_of: null, credential_refs: [], workspace: {} }, null).map(
        (r) => [r.label, r.value],
      ),
    );
    expect(rows.Packet).toBe("pkt_2");
    expect(rows.Credentials).toBe("none");
    expect(rows.Workspace).toBe("no worktree (runs in its own output directory)");
    expect(rows["Spawn authority"]).toMatch(/^not granted from the console: .*dry run/);
  });

  it("words byte sizes exactly", () => {
    expect([bytesText(1000), bytesText(4096), bytesText(3 * 1024 * 1024)]).toEqual([
      "1000 B",
      "4 KiB",
      "3 MiB",
    ]);
  });
});

describe("adapter questions", () => {
  const invocation = {
    type: "adapter_questions",
    adapter_id: "fake-local",
    packet_id: "pkt_1",
    dispatch_receipt_id: "sha256:child",
    questions: [
      { question_id: "q_scope", prompt: "Which module?", answer_schema: { type: "string" } },
    ],
    answer: "an object keyed by question_id",
  };

  it("reads the question ids, prompts and answer schemas of an adapter's request", () => {
    expect(adapterQuestions(invocation)).toEqual({
      adapterId: "fake-local",
      packetId: "pkt_1",
      dispatchReceiptId: "sha256:child",
      questions: [
        { question_id: "q_scope", prompt: "Which module?", answer_schema: { type: "string" } },
      ],
    });
    expect(adapterQuestions({ type: "agent_task" })).toBeNull();
  });

  it("notes an attempt that asked for input instead of a failure code", () => {
    expect(attemptNote({ failure: null, questions: [{ question_id: "q_scope" }] })).toEqual({
      text: "needs input: q_scope",
      title: "the adapter asked; the run needs answers",
    });
    expect(attemptNote({ failure: null, questions: [] })).toBeNull();
    expect(
      attemptNote({
        failure: {
          code: "spawn_authority_missing",
          phase: "admission",
          portable_code: "missing_authority",
          message: "no --allow-spawn",
        },
        questions: [],
      }),
    ).toEqual({ text: "spawn_authority_missing", title: "no --allow-spawn" });
  });
});
