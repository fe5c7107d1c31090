/**
 * `evaluateKernel` on inputs of our own, asserting the answers upstream's kernel gives for
 * them (derived from its decision rules): every kind, the variants and reason strings the
 * public fixtures do not reach, and the shapes it refuses.
 */
import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { JsonValue } from "../parser/json.js";
import { KERNEL_KINDS, evaluateKernel } from "./eval.js";

const run = (input: Record<string, unknown>): JsonValue => evaluateKernel(input as never);

function refused(input: unknown): string {
  try {
    evaluateKernel(input as never);
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as RuntimeError).code).toBe("KERNEL_EVALUATION_FAILED");
    return String((error as RuntimeError).details.path);
  }
  throw new Error("expected the evaluation to fail");
}

describe("kernel kinds", () => {
  it("are upstream's sixteen", () => {
    expect(KERNEL_KINDS).toEqual(
      [
        "policy.admitGraphStepScopes",
        "policy.admitLocalSkill",
        "policy.admitRetryPolicy",
        "policy.buildAuthorityProofMetadata",
        "policy.buildLocalScopeAdmission",
        "policy.evaluatePublicCommentOpportunity",
        "policy.evaluatePublicPullRequestCandidate",
        "policy.normalizePublicWorkPolicy",
        "policy.validateCredentialBinding",
        "state-machine.createSequentialGraphState",
        "state-machine.createSingleStepState",
        "state-machine.evaluateFanoutSync",
        "state-machine.fanoutSyncDecisionKey",
        "state-machine.planSequentialGraphTransition",
        "state-machine.transitionSequentialGraph",
        "state-machine.transitionSingleStep",
      ].sort(),
    );
  });

  it("refuses an unknown kind and documents over upstream's bounds", () => {
    expect(refused({ kind: "policy.admitSandbox" })).toBe("kind");
    let deep: unknown = 0;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(refused({ kind: "state-machine.fanoutSyncDecisionKey", deep })).toBe("");
  });
});

describe("state-machine.transitionSequentialGraph", () => {
  const state = {
    graphId: "g",
    status: "pending",
    steps: [
      { stepId: "a", status: "pending", attempts: 0 },
      { stepId: "b", status: "pending", attempts: 0 },
    ],
  };
  const step = (
    s: Record<string, unknown>,
    event: Record<string, unknown>,
  ): Record<string, unknown> =>
    run({ kind: "state-machine.transitionSequentialGraph", state: s, event }) as never;

  it("starts, succeeds with a witness, fails, skips and completes", () => {
    const started = step(state, { type: "start_step", stepId: "a", at: "t1" });
    expect(started).toEqual({
      graphId: "g",
      status: "running",
      steps: [
        { stepId: "a", status: "running", attempts: 1, startedAt: "t1" },
        { stepId: "b", status: "pending", attempts: 0 },
      ],
    });
    const done = step(started, {
      type: "step_succeeded",
      at: "t2",
      admissionWitness: { stepId: "a", receiptId: "rx_a" },
      outputs: { ok: true },
    });
    expect((done.steps as unknown[])[0]).toEqual({
      stepId: "a",
      status: "succeeded",
      attempts: 1,
      startedAt: "t1",
      completedAt: "t2",
      receiptId: "rx_a",
      outputs: { ok: true },
    });
    // A witness without a receipt id proves nothing: the step stays running.
    expect(
      step(started, {
        type: "step_succeeded",
        at: "t2",
        admissionWitness: { stepId: "a", receiptId: "" },
      }),
    ).toEqual(started);
    const failed = step(started, { type: "step_failed", stepId: "a", at: "t3", error: "boom" });
    expect((failed.steps as unknown[])[0]).toEqual({
      stepId: "a",
      status: "failed",
      attempts: 1,
      startedAt: "t1",
      completedAt: "t3",
      error: "boom",
    });
    // Only a pending step can be skipped; completing needs every step terminal.
    expect(step(done, { type: "step_skipped", stepId: "a", at: "t4" })).toEqual(done);
    const skipped = step(done, { type: "step_skipped", stepId: "b", at: "t4" });
    expect((skipped.steps as unknown[])[1]).toEqual({
      stepId: "b",
      status: "skipped",
      attempts: 0,
      completedAt: "t4",
    });
    expect(step(done, { type: "complete" }).status).toBe("running");
    expect(step(skipped, { type: "complete" }).status).toBe("succeeded");
    expect(step(state, { type: "pause_graph", reason: "r" }).status).toBe("paused");
    expect(step(state, { type: "escalate_graph", reason: "r" }).status).toBe("escalated");
    expect(step(state, { type: "fail_graph", error: "e" }).status).toBe("failed");
  });

  it("restarts a failed step with a fresh attempt and a running graph even for an unknown step", () => {
    const failed = {
      graphId: "g",
      status: "running",
      steps: [{ stepId: "a", status: "failed", attempts: 1, error: "x", completedAt: "t" }],
    };
    expect(step(failed, { type: "start_step", stepId: "a", at: "t5" }).steps).toEqual([
      { stepId: "a", status: "running", attempts: 2, startedAt: "t5" },
    ]);
    expect(step(state, { type: "start_step", stepId: "zz", at: "t" })).toEqual({
      ...state,
      status: "running",
    });
  });

  it("refuses events and states of the wrong shape", () => {
    expect(
      refused({ kind: "state-machine.transitionSequentialGraph", state, event: { type: "nope" } }),
    ).toBe("event.type");
    expect(
      refused({
        kind: "state-machine.transitionSequentialGraph",
        state,
        event: { type: "step_succeeded", at: "t" },
      }),
    ).toBe("event.admissionWitness");
    expect(
      refused({
        kind: "state-machine.transitionSequentialGraph",
        state: { ...state, steps: [{ stepId: "a", status: "pending", attempts: -1 }] },
        event: { type: "complete" },
      }),
    ).toBe("state.steps[0].attempts");
  });
});

describe("state-machine.planSequentialGraphTransition", () => {
  const plan = (state: unknown, steps: unknown, extra: Record<string, unknown> = {}) =>
    run({ kind: "state-machine.planSequentialGraphTransition", state, steps, ...extra });
  const fan = [
    { id: "m", fanoutGroup: "adv" },
    { id: "r", fanoutGroup: "adv" },
    { id: "s", contextFrom: ["m", "r"] },
  ];
  const done = (risk: number) => ({
    graphId: "g",
    status: "running",
    steps: [
      { stepId: "m", status: "succeeded", attempts: 1, outputs: { go: true } },
      { stepId: "r", status: "succeeded", attempts: 1, outputs: { risk } },
      { stepId: "s", status: "pending", attempts: 0 },
    ],
  });
  const policies = {
    adv: {
      groupId: "adv",
      strategy: "all",
      onBranchFailure: "halt",
      thresholdGates: [{ step: "r", field: "risk", above: 0.5, action: "pause" }],
    },
  };

  it("runs the pending branches of a group together", () => {
    const state = {
      graphId: "g",
      status: "pending",
      steps: fan.map((s) => ({ stepId: s.id, status: "pending", attempts: 0 })),
    };
    expect(plan(state, fan)).toEqual({
      type: "run_fanout",
      groupId: "adv",
      branches: [
        { stepId: "m", attempt: 1, contextFrom: [] },
        { stepId: "r", attempt: 1, contextFrom: [] },
      ],
    });
  });

  it("pauses on a gate until its key is resolved, then moves on", () => {
    const paused = plan(done(0.9), fan, { fanoutPolicies: policies });
    expect(paused).toMatchObject({
      type: "paused",
      stepId: "m",
      reason: "r.risk=0.9 exceeded 0.5",
      syncDecision: {
        groupId: "adv",
        decision: "pause",
        ruleFired: "threshold.r.risk.above",
        gate: { type: "threshold", stepId: "r", field: "risk", value: 0.9, comparedTo: 0.5 },
      },
    });
    expect(
      plan(done(0.9), fan, {
        fanoutPolicies: policies,
        resolvedFanoutGateKeys: ["adv:threshold.r.risk.above"],
      }),
    ).toEqual({ type: "run_step", stepId: "s", attempt: 1, contextFrom: ["m", "r"] });
    expect(plan(done(0.1), fan, { fanoutPolicies: policies })).toMatchObject({ type: "run_step" });
  });

  it("fails a state that lacks a step and waits on unmet context", () => {
    expect(
      plan(
        {
          graphId: "g",
          status: "running",
          steps: [{ stepId: "a", status: "succeeded", attempts: 1 }],
        },
        [{ id: "a" }, { id: "b" }],
      ),
    ).toEqual({ type: "failed", stepId: "b", reason: "step state is missing" });
    expect(
      plan(
        {
          graphId: "g",
          status: "running",
          steps: [
            { stepId: "a", status: "skipped", attempts: 0 },
            { stepId: "b", status: "pending", attempts: 0 },
          ],
        },
        [{ id: "a" }, { id: "b", contextFrom: ["a"] }],
      ),
    ).toEqual({ type: "blocked", stepId: "b", reason: "waiting for context from a" });
  });

  it("counts an exhausted branch as failed under the default all/halt policy", () => {
    expect(
      plan(
        {
          graphId: "g",
          status: "running",
          steps: [
            { stepId: "m", status: "succeeded", attempts: 1 },
            { stepId: "r", status: "failed", attempts: 1 },
            { stepId: "s", status: "pending", attempts: 0 },
          ],
        },
        fan,
      ),
    ).toEqual({
      type: "failed",
      stepId: "m",
      reason: "1/2 branches failed and on_branch_failure is halt",
      syncDecision: {
        groupId: "adv",
        decision: "halt",
        strategy: "all",
        ruleFired: "branch_failure.halt",
        reason: "1/2 branches failed and on_branch_failure is halt",
        branchCount: 2,
        successCount: 1,
        failureCount: 1,
        requiredSuccesses: 2,
      },
    });
  });
});

describe("state-machine.evaluateFanoutSync", () => {
  const sync = (policy: Record<string, unknown>, results: unknown[], keys?: string[]) =>
    run({
      kind: "state-machine.evaluateFanoutSync",
      policy: { groupId: "g", onBranchFailure: "continue", ...policy },
      results,
      ...(keys !== undefined ? { resolvedGateKeys: keys } : {}),
    });
  const results = [
    { stepId: "b", status: "succeeded", outputs: { verdict: { pick: "x" } } },
    { stepId: "a", status: "succeeded", outputs: { verdict: { pick: "y" } } },
    { stepId: "c", status: "failed" },
  ];

  it("escalates a conflict with the values keyed by step id and no step list", () => {
    expect(
      sync(
        {
          strategy: "any",
          conflictGates: [{ field: "verdict.pick", steps: [], action: "escalate" }],
        },
        results,
      ),
    ).toEqual({
      groupId: "g",
      decision: "escalate",
      strategy: "any",
      ruleFired: "conflict.verdict.pick",
      reason: "fanout branches disagreed on structured field verdict.pick",
      branchCount: 3,
      successCount: 2,
      failureCount: 1,
      requiredSuccesses: 1,
      gate: {
        type: "conflict",
        field: "verdict.pick",
        values: { a: "y", b: "x" },
        action: "escalate",
      },
    });
  });

  it("applies quorum min_success and halts a missing or non-numeric threshold field", () => {
    expect(sync({ strategy: "quorum", minSuccess: 3 }, results)).toMatchObject({
      decision: "halt",
      ruleFired: "quorum.min_success",
      reason: "2/3 branches succeeded; required 3",
    });
    expect(
      sync(
        {
          strategy: "all",
          thresholdGates: [{ step: "a", field: "verdict", above: 1, action: "pause" }],
        },
        results,
      ),
    ).toMatchObject({
      decision: "halt",
      ruleFired: "threshold.a.verdict.non_numeric",
      gate: {
        type: "threshold",
        stepId: "a",
        field: "verdict",
        value: { pick: "y" },
        action: "pause",
      },
    });
    expect(
      sync(
        {
          strategy: "all",
          thresholdGates: [{ step: "a", field: "score", above: 1, action: "pause" }],
        },
        results,
      ),
    ).toMatchObject({ decision: "halt", reason: "threshold field a.score was not produced" });
  });

  it("knows only the all, any and quorum strategies", () => {
    expect(
      refused({
        kind: "state-machine.evaluateFanoutSync",
        policy: { groupId: "g", strategy: "threshold", onBranchFailure: "halt" },
        results: [],
      }),
    ).toBe("policy.strategy");
  });
});

describe("state-machine.transitionSingleStep", () => {
  const running = { stepId: "s", status: "running", startedAt: "t0" };
  it("succeeds only with this step's admission witness", () => {
    const succeed = (witness: unknown) =>
      run({
        kind: "state-machine.transitionSingleStep",
        state: running,
        event: { type: "succeed", at: "t1", admissionWitness: witness },
      });
    expect(succeed({ stepId: "s", receiptId: "rx" })).toEqual({
      ...running,
      status: "succeeded",
      completedAt: "t1",
    });
    expect(succeed({ stepId: "other", receiptId: "rx" })).toEqual(running);
    expect(
      refused({
        kind: "state-machine.transitionSingleStep",
        state: running,
        event: { type: "succeed", at: "t1" },
      }),
    ).toBe("event.admissionWitness");
  });
});

describe("policy.admitLocalSkill", () => {
  const admit = (source: Record<string, unknown>, options: Record<string, unknown> = {}) =>
    run({ kind: "policy.admitLocalSkill", skill: { name: "x", source }, options });
  const strict = { executionPolicy: { strictCliToolInlineCode: true } };
  const inline = (interpreter: string, flag: string) => ({
    status: "deny",
    reasons: [
      `cli-tool source '${interpreter}' uses inline code via '${flag}', which is rejected by strict workspace policy; move the program into a checked-in script and invoke that file instead`,
    ],
  });

  it("denies a source type outside upstream's default list", () => {
    expect(admit({ type: "adapter" })).toEqual({
      status: "deny",
      reasons: ["source type 'adapter' is not allowed for local execution"],
    });
  });

  it("matches interpreter flags as whole arguments, anywhere, case-insensitively", () => {
    expect(
      admit({ type: "cli-tool", command: "node", args: ["script.js", " -E "] }, strict),
    ).toEqual(inline("node", "-E"));
    expect(
      admit({ type: "cli-tool", command: "C:\\Windows\\cmd.exe", args: ["/C", "dir"] }, strict),
    ).toEqual(inline("cmd", "/c"));
    expect(
      admit(
        { type: "cli-tool", command: "/usr/bin/env", args: ["A=1", "python3.12", "-c", "x"] },
        strict,
      ),
    ).toEqual(inline("python3.12", "-c"));
    expect(admit({ type: "cli-tool", command: "bash", args: ["-lc", "echo"] }, strict)).toEqual(
      inline("bash", "-lc"),
    );
    // Clustered flags, option-bearing `env` and `pypy3` are outside upstream's rule.
    for (const [command, args] of [
      ["python3", ["-Bc", "x"]],
      ["env", ["-i", "node", "-e", "x"]],
      ["pypy3", ["-c", "x"]],
      ["node", ["--eval=1"]],
    ] as const)
      expect(admit({ type: "cli-tool", command, args }, strict)).toEqual({
        status: "allow",
        reasons: ["local admission allowed"],
      });
  });

  it("refuses an unknown execution-policy field", () => {
    expect(
      refused({
        kind: "policy.admitLocalSkill",
        skill: { name: "x", source: { type: "cli-tool" } },
        options: { executionPolicy: { strict: true } },
      }),
    ).toBe("options.executionPolicy.strict");
  });
});

describe("policy scope and credential decisions", () => {
  it("lets prefix:* cover exactly one segment", () => {
    expect(
      run({
        kind: "policy.admitGraphStepScopes",
        request: {
          stepId: "d",
          requestedScopes: ["repo:read", "repo:admin:keys"],
          grant: { scopes: ["repo:*"] },
        },
      }),
    ).toEqual({
      status: "deny",
      reasons: ["step 'd' requested scope(s) outside graph grant: repo:admin:keys"],
      stepId: "d",
      requestedScopes: ["repo:read", "repo:admin:keys"],
      grantedScopes: ["repo:*"],
    });
  });

  const grant = {
    grant_id: "g1",
    provider: "github",
    scopes: ["repo:read"],
    status: "active",
    not_before: "2026-05-21T00:00:00Z",
    expires_at: "2026-05-23T00:00:00Z",
  };

  it("reads a malformed auth block as an invalid request, and a lower-case z as no moment", () => {
    expect(run({ kind: "policy.buildLocalScopeAdmission", auth: { provider: "github" } })).toEqual({
      status: "deny",
      requested_scopes: [],
      granted_scopes: [],
      reasons: ["connected auth scopes must include at least one non-empty string"],
      decision_summary: "invalid connected auth request",
    });
    const auth = { provider: "github", scopes: ["repo:read"] };
    expect(
      run({
        kind: "policy.buildLocalScopeAdmission",
        auth,
        grants: [grant],
        options: { connectedAuthCheckedAt: "2026-05-22T00:00:00z" },
      }),
    ).toMatchObject({ status: "deny", decision_summary: "no matching active grant resolved" });
    expect(
      run({
        kind: "policy.buildLocalScopeAdmission",
        auth,
        grants: [grant],
        options: { connectedAuthCheckedAt: "2026-05-22T00:00:00.000000001Z" },
      }),
    ).toMatchObject({ status: "allow", grant_id: "g1" });
  });

  const credential = {
    kind: "runx.credential-envelope.v1",
    grant_id: "g1",
    provider: "github",
    auth_mode: "api_key",
    material_kind: "api_key",
    provider_reference: "local_per_run",
    scopes: ["*"],
    material_ref: "local:github:g1",
  };
  const admission = {
    status: "allow",
    requested_scopes: ["repo:read"],
    granted_scopes: ["repo:read"],
    grant_id: "g1",
  };

  it("never reads a credential's * as every scope, and denies a malformed auth block", () => {
    expect(
      run({
        kind: "policy.validateCredentialBinding",
        request: {
          auth: { provider: "github", scopes: ["repo:read"] },
          grants: [grant],
          scopeAdmission: admission,
          credential,
        },
      }),
    ).toEqual({
      status: "deny",
      reasons: [
        "credential scopes do not include admitted request scope(s): repo:read",
        "credential scopes exceed admitted grant scope(s): *",
      ],
    });
    expect(
      run({
        kind: "policy.validateCredentialBinding",
        request: { auth: "github", grants: [], scopeAdmission: admission },
      }),
    ).toEqual({ status: "deny", reasons: ["connected auth must be an object, null, or false"] });
  });

  it("reads credential envelopes and scope admissions strictly", () => {
    const request = {
      auth: { provider: "github", scopes: ["repo:read"] },
      grants: [grant],
      scopeAdmission: admission,
    };
    expect(
      refused({
        kind: "policy.validateCredentialBinding",
        request: { ...request, credential: { ...credential, connection_id: "c" } },
      }),
    ).toBe("request.credential.connection_id");
    expect(
      refused({
        kind: "policy.validateCredentialBinding",
        request: { ...request, credential: { ...credential, kind: undefined } },
      }),
    ).toBe("request.credential.kind");
    expect(
      refused({
        kind: "policy.validateCredentialBinding",
        request: { ...request, scopeAdmission: { ...admission, grant_id: "" } },
      }),
    ).toBe("request.scopeAdmission.grant_id");
  });

  it("builds a proof for a malformed auth block as requesting nothing, and needs a boundary", () => {
    const options = {
      skillName: "s",
      sourceType: "cli-tool",
      auth: 7,
      executionBoundary: { kind: "trusted_host_process" },
    };
    const proof = run({ kind: "policy.buildAuthorityProofMetadata", options }) as {
      authority_proof: Record<string, unknown>;
    };
    expect(proof.authority_proof.requested).toEqual({
      connected_auth: false,
      scopes: [],
      mutating: false,
    });
    expect(proof.authority_proof.credential_material).toEqual({ status: "not_requested" });
    expect(proof.authority_proof.scope_admission).toMatchObject({
      status: "deny",
      decision_summary: "invalid connected auth request",
    });
    expect(
      refused({
        kind: "policy.buildAuthorityProofMetadata",
        options: { ...options, executionBoundary: undefined },
      }),
    ).toBe("options.executionBoundary");
  });
});

describe("public-work policy", () => {
  it("blocks titles naming deps anywhere and version bumps", () => {
    const pr = (title: string) =>
      run({
        kind: "policy.evaluatePublicPullRequestCandidate",
        request: { title, authorLogin: "alice" },
      });
    expect(pr("Refresh lockdeps cache")).toEqual({
      blocked: true,
      reasons: ["dependency_update_pull_request"],
    });
    expect(pr("bump serde to v1.2")).toEqual({
      blocked: true,
      reasons: ["dependency_update_pull_request"],
    });
    expect(pr("Update docs for release 2")).toEqual({ blocked: false, reasons: [] });
  });
});
