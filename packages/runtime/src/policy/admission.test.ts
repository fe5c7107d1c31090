import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { evaluateKernel } from "../kernel/eval.js";
import { buildAuthorityProof } from "./authority-proof.js";
import {
  buildLocalScopeAdmission,
  findMatchingGrant,
  validateCredentialBinding,
} from "./connected-auth.js";
import type { ConnectedGrant } from "./connected-auth.js";
import { admitLocalSkill } from "./local-admission.js";
import {
  evaluatePublicCommentOpportunity,
  evaluatePublicPullRequestCandidate,
} from "./public-work.js";
import { admitGraphStepScopes, scopeAllows } from "./scopes.js";

const grant: ConnectedGrant = {
  grant_id: "g1",
  provider: "github",
  scopes: ["repo:*"],
  status: "active",
  not_before: "2026-05-21T00:00:00Z",
  expires_at: "2026-05-23T00:00:00Z",
};
const at = { checkedAt: "2026-05-22T00:00:00Z" };
const need = { provider: "github", scopes: ["repo:read"] };

describe("scopes", () => {
  it("matches exactly unless wildcards are honoured", () => {
    expect(scopeAllows("repo:*", "repo:read")).toBe(false);
    expect(scopeAllows("repo:*", "repo:read", { prefix: true })).toBe(true);
    expect(scopeAllows("repo:*", "repository:read", { prefix: true })).toBe(false);
    expect(scopeAllows("*", "x", { prefix: true })).toBe(false);
    expect(scopeAllows("*", "x", { universal: true })).toBe(true);
  });

  it("denies a step scope outside the graph grant, naming it", () => {
    const d = admitGraphStepScopes({
      stepId: "deploy",
      requestedScopes: ["checks:read", "deployments:write"],
      grant: { grantId: "g", scopes: ["checks:read"] },
    });
    expect(d).toEqual({
      status: "deny",
      reasons: ["step 'deploy' requested scope(s) outside graph grant: deployments:write"],
      stepId: "deploy",
      requestedScopes: ["checks:read", "deployments:write"],
      grantedScopes: ["checks:read"],
      grantId: "g",
    });
  });
});

describe("connected-auth grants", () => {
  it("admits only an active grant live at the check time", () => {
    expect(findMatchingGrant(need, [grant], at)?.grant_id).toBe("g1");
    expect(findMatchingGrant(need, [grant], {})).toBeUndefined();
    expect(findMatchingGrant(need, [grant], { checkedAt: "2026-05-23T00:00:00Z" })).toBeUndefined();
    expect(findMatchingGrant(need, [grant], { checkedAt: "2026-05-20T00:00:00Z" })).toBeUndefined();
    const { status: _s, ...noStatus } = grant;
    expect(findMatchingGrant(need, [noStatus], at)).toBeUndefined();
    expect(findMatchingGrant(need, [{ ...grant, status: "revoked" }], at)).toBeUndefined();
    expect(
      findMatchingGrant(need, [{ ...grant, expires_at: "2026-5-23T00:00:00Z" }], at),
    ).toBeUndefined();
  });

  it("keeps targeted and untargeted grants apart", () => {
    const targeted = { ...grant, target_repo: "o/r" };
    expect(findMatchingGrant(need, [targeted], at)).toBeUndefined();
    expect(findMatchingGrant({ ...need, target_repo: "o/r" }, [targeted], at)?.grant_id).toBe("g1");
  });

  it("honours a universal grant only when trusted", () => {
    const star = { ...grant, scopes: ["*"] };
    expect(findMatchingGrant(need, [star], at)).toBeUndefined();
    expect(findMatchingGrant(need, [star], { ...at, universalWildcard: true })?.grant_id).toBe(
      "g1",
    );
  });

  it("denies a malformed auth block in the scope admission", () => {
    expect(buildLocalScopeAdmission({ scopes: ["a"] }, [], at)).toMatchObject({
      status: "deny",
      reasons: ["connected auth provider is required"],
    });
  });

  it("denies credential material that exceeds the admitted grant", () => {
    const auth = { type: "connected", ...need };
    const admission = buildLocalScopeAdmission(auth, [grant], at);
    expect(admission.status).toBe("allow");
    const credential = {
      grant_id: "g1",
      provider: "github",
      scopes: ["repo:read", "user:read"],
      material_ref: "m",
    };
    expect(
      validateCredentialBinding({ auth, grants: [grant], scopeAdmission: admission, credential }),
    ).toEqual({
      status: "deny",
      reasons: ["credential scopes exceed admitted grant scope(s): user:read"],
    });
    expect(validateCredentialBinding({ auth, grants: [grant], scopeAdmission: admission })).toEqual(
      {
        status: "deny",
        reasons: ["credential material was not resolved for admitted connected auth grant"],
      },
    );
  });

  it("records a denied request in the authority proof without material", () => {
    const proof = buildAuthorityProof({
      skillName: "s",
      sourceType: "cli-tool",
      auth: { type: "connected", ...need },
    });
    expect(proof.credential_material).toEqual({
      status: "denied",
      provider: "github",
      scopes: ["repo:read"],
    });
    expect(proof.requested).toEqual({
      connected_auth: true,
      scopes: ["repo:read"],
      mutating: false,
    });
  });
});

describe("local admission", () => {
  it("collects every reason", () => {
    const d = admitLocalSkill(
      {
        name: "x",
        source: {
          type: "cli-tool",
          command: "/usr/bin/python3",
          args: ["-c", "print(1)"],
          timeoutSeconds: 301,
        },
        auth: { type: "connected", ...need },
      },
      { strictCliToolInlineCode: true },
    );
    expect(d.status).toBe("deny");
    expect(d.reasons).toEqual([
      "source timeout exceeds local maximum of 300 seconds",
      "cli-tool source 'python3' uses inline code via '-c', which is rejected by strict workspace policy; move the program into a checked-in script and invoke that file instead",
      "connected auth grant required for provider 'github'",
    ]);
  });

  it("allows inline code when the strict policy is off, and refuses unknown source types", () => {
    expect(
      admitLocalSkill({
        name: "x",
        source: { type: "cli-tool", command: "sh", args: ["-c", "true"] },
      }).status,
    ).toBe("allow");
    expect(admitLocalSkill({ name: "x", source: { type: "teleport" } }).reasons).toEqual([
      "source type 'teleport' is not allowed for local execution",
    ]);
  });
});

describe("public work", () => {
  it("blocks bot and dependency-update pull requests", () => {
    expect(
      evaluatePublicPullRequestCandidate({
        authorLogin: "Dependabot[bot]",
        title: "Bump lodash from 4.17.1 to 4.17.21",
      }),
    ).toEqual({
      blocked: true,
      reasons: ["bot_authored_pull_request", "dependency_update_pull_request"],
    });
    expect(
      evaluatePublicPullRequestCandidate({
        authorLogin: "alice",
        title: "Fix typo",
        labels: ["build: ci"],
      }).reasons,
    ).toEqual(["internal_or_build_only_pull_request"]);
  });

  it("needs a welcome signal for PR comments in the triage lane", () => {
    const request = {
      source: "github_pull_request",
      lane: "issue-triage",
      authorLogin: "alice",
      title: "Fix typo",
    };
    expect(evaluatePublicCommentOpportunity(request)).toEqual({
      blocked: true,
      reasons: ["comment_without_welcome_signal"],
      welcome_signal: false,
    });
    expect(evaluatePublicCommentOpportunity({ ...request, commentsCount: 1 }).blocked).toBe(false);
    expect(
      evaluatePublicCommentOpportunity({
        ...request,
        authorAssociation: "member",
        recentOutcomes: [{ status: " Spam " }],
      }).reasons,
    ).toEqual(["comment_lane_in_trust_recovery"]);
  });
});

describe("kernel eval", () => {
  it("fails a malformed input naming the field", () => {
    try {
      evaluateKernel({
        $schema: "../schema/policy.schema.json",
        name: "x",
        input: { kind: "policy.admitRetryPolicy", request: { stepId: 3 } },
        expected: { kind: "output", value: null },
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(RuntimeError);
      expect((error as RuntimeError).code).toBe("KERNEL_EVALUATION_FAILED");
      expect((error as RuntimeError).message).toBe("kernel fixture evaluation failed");
      expect((error as RuntimeError).details.path).toBe("input.request.stepId");
    }
  });

  it("plans sequential graphs: retries, blocked context, fanout halts", () => {
    const steps = [
      { id: "a", retry: { maxAttempts: 2 } },
      { id: "b", contextFrom: ["a"] },
    ];
    const state = (a: string, attempts: number) => ({
      graphId: "g",
      status: "running",
      steps: [
        { stepId: "a", status: a, attempts },
        { stepId: "b", status: "pending", attempts: 0 },
      ],
    });
    const plan = (s: unknown, st: unknown = steps, extra = {}) =>
      evaluateKernel({
        kind: "state-machine.planSequentialGraphTransition",
        state: s,
        steps: st,
        ...extra,
      } as never);
    expect(plan(state("failed", 1))).toEqual({
      type: "run_step",
      stepId: "a",
      attempt: 2,
      contextFrom: [],
    });
    expect(plan(state("failed", 2))).toEqual({
      type: "failed",
      stepId: "a",
      reason: "step failed and retry budget is exhausted",
    });
    expect(plan(state("running", 1))).toEqual({
      type: "blocked",
      stepId: "a",
      reason: "step is already running",
    });
    expect(plan(state("succeeded", 1))).toEqual({
      type: "run_step",
      stepId: "b",
      attempt: 1,
      contextFrom: ["a"],
    });
    const fan = [
      { id: "x", fanoutGroup: "g1" },
      { id: "y", fanoutGroup: "g1" },
    ];
    const fanState = (y: string) => ({
      graphId: "g",
      status: "running",
      steps: [
        { stepId: "x", status: "succeeded", attempts: 1 },
        { stepId: "y", status: y, attempts: y === "pending" ? 0 : 1 },
      ],
    });
    expect(plan(fanState("pending"), fan)).toEqual({
      type: "run_fanout",
      groupId: "g1",
      branches: [{ stepId: "y", attempt: 1, contextFrom: [] }],
    });
    expect(plan(fanState("failed"), fan)).toMatchObject({
      type: "failed",
      stepId: "x",
      syncDecision: { decision: "halt", ruleFired: "branch_failure.halt" },
    });
    expect(plan(fanState("succeeded"), fan)).toEqual({ type: "complete" });
  });
});
