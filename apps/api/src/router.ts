/**
 * The API's routers. Each procedure: validate input against the runtime's JSON Schema
 * contract → one runtime (or executor) call → result. `AppRouter` is the hand-off type for
 * apps/web; the contract is documented in ../README.md.
 */
import type { Operator } from "@runx/runtime";
import { toTrpcError } from "./errors.js";
import { SESSION_TTL_SECONDS } from "./session.js";
import { throttled } from "./throttle.js";
import { contract, publicProcedure, roleProcedure, router } from "./trpc.js";
import type { ApiContext } from "./trpc.js";
import type { RunEvent } from "./events.js";

const viewer = roleProcedure("viewer");
const approver = roleProcedure("approver");
const admin = roleProcedure("admin");

/** Opens a server-side session for `operator`, sets its cookies, returns what the client keeps. */
async function signIn(ctx: ApiContext, operator: Operator) {
  const { id } = await ctx.runtime.console.operators.openSession(operator.id, SESSION_TTL_SECONDS);
  const session = await ctx.sessions.issue(operator.id, id);
  ctx.setSession(session);
  return { operator, csrfToken: session.csrf };
}

const auth = router({
  /**
   * Whether the first admin still has to be created, who is signed in, and whether the
   * request's session cookie belonged to a session that has ended (the sign-in page says so).
   */
  status: publicProcedure.query(async ({ ctx }) => ({
    bootstrapRequired: (await ctx.runtime.console.operators.count()) === 0,
    operator: ctx.operator,
    sessionEnded: ctx.sessionEnded === true,
  })),
  /** Creates the first admin with the one-time bootstrap token and signs them in. */
  bootstrap: publicProcedure.input(contract("auth-bootstrap")).mutation(async ({ ctx, input }) => {
    const operator = await throttled(ctx.throttle, "bootstrap", ctx.clientAddress, undefined, () =>
      ctx.runtime.console.operators.redeemBootstrap(input),
    );
    return signIn(ctx, operator);
  }),
  /**
   * Signs in; sets the session cookie and returns the CSRF token to echo on mutations.
   * Throttled per account and per client address (429 with Retry-After).
   */
  login: publicProcedure.input(contract("auth-login")).mutation(async ({ ctx, input }) => {
    const operator = await throttled(
      ctx.throttle,
      "sign-in",
      ctx.clientAddress,
      input.username,
      () => ctx.runtime.console.operators.authenticate(input.username, input.password),
    );
    return signIn(ctx, operator);
  }),
  /** Ends the caller's session on the server and clears its cookies. */
  logout: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionId !== null) await ctx.runtime.console.operators.closeSession(ctx.sessionId);
    ctx.setSession(null);
    return { ok: true as const };
  }),
  me: viewer.query(({ ctx }) => ctx.operator),
  /** A Bearer token for automation, shown once. */
  createToken: viewer
    .input(contract("auth-create-token"))
    .mutation(({ ctx, input }) =>
      ctx.runtime.console.operators.createToken(ctx.operator.id, input.name),
    ),
  /** API tokens (never the token or its hash): the caller's own, or `username`'s for an admin. */
  listTokens: viewer
    .input(contract("auth-list-tokens"))
    .query(({ ctx, input }) =>
      ctx.runtime.console.operators.listTokens(ctx.operator, input.username),
    ),
  /** Revokes one of the caller's API tokens, or anyone's for an admin. */
  revokeToken: viewer
    .input(contract("auth-revoke-token"))
    .mutation(({ ctx, input }) =>
      ctx.runtime.console.operators.revokeToken(ctx.operator, input.tokenId),
    ),
  addOperator: admin
    .input(contract("operator-add"))
    .mutation(({ ctx, input }) => ctx.runtime.console.operators.add(input)),
  listOperators: admin.query(({ ctx }) => ctx.runtime.console.operators.list()),
  /** Disabling ends the operator's sessions and tokens; the last enabled admin is refused. */
  setOperatorDisabled: admin
    .input(contract("operator-set-disabled"))
    .mutation(({ ctx, input }) =>
      ctx.runtime.console.operators.setDisabled(input.username, input.disabled),
    ),
  /**
   * Changes an operator's role, effective from their next request (sessions stay open);
   * demoting the last enabled admin is refused (LAST_ADMIN).
   */
  setOperatorRole: admin
    .input(contract("operator-set-role"))
    .mutation(({ ctx, input }) =>
      ctx.runtime.console.operators.setRole(input.username, input.role),
    ),
});

const runs = router({
  /** Filtered pages of runs with their outcomes; `waitingForMe` reads the caller's role. */
  list: viewer
    .input(contract("runs-list"))
    .query(({ ctx, input }) => ctx.runtime.console.runs.list(input, ctx.operator)),
  get: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.runs.detail(input.runId)),
  /**
   * Every step (planned ones not reached yet too) with times, attempts, status and receipt,
   * and the event history: start, steps, pauses, decisions, resumes (who and why), the seal.
   */
  timeline: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.runs.timeline(input.runId)),
  /**
   * Starts a run in the worker pool; the initiator is recorded before it starts, with the
   * spawn authority they grant its adapter dispatches (`allowSpawn`, deny by default).
   */
  start: approver.input(contract("runs-start")).mutation(async ({ ctx, input }) => {
    // Only catalog entries start (refused before a run id is recorded); the job re-checks.
    const ref = await ctx.runtime.catalog.startRef(input.skill);
    const runId = ctx.runtime.console.newRunId();
    ctx.runtime.console.recordInitiator(runId, ctx.operator, {
      allowSpawn: input.allowSpawn === true,
    });
    return ctx.executor.start({
      runId,
      ref,
      inputs: input.inputs,
      ...(input.runner !== undefined ? { runner: input.runner } : {}),
    });
  }),
  /**
   * Answers agent/input requests (approval gates are refused here). The runtime admits the
   * answers first, as a resume would, so a refused answer never reaches the worker pool and
   * the run stays paused as it was.
   */
  answer: approver.input(contract("runs-answer")).mutation(({ ctx, input }) => {
    ctx.runtime.console.runs.checkAnswers(input);
    // Who answered, and their note, become the run's resume event.
    return ctx.executor.answer({ ...input, by: ctx.operator.username });
  }),
  /**
   * Continues a paused run that needs no new human input: a run a restart interrupted
   * (its `interrupted` request), or a gate with decisions on the run's current pause (a
   * release a restart cut off; see recovery.ts `resumeJob`).
   */
  resume: approver.input(contract("run-ref")).mutation(({ ctx, input }) => {
    const job = ctx.runtime.console.recovery.resumeJob(input.runId);
    return job.kind === "release"
      ? ctx.executor.release(job)
      : ctx.executor.answer({ ...job, by: ctx.operator.username });
  }),
  /** Live run status changes (SSE). */
  onStatus: viewer.subscription(async function* ({ ctx, signal }) {
    for await (const event of ctx.events.runs(signal)) yield event;
  }),
});

const approvals = router({
  pending: viewer.query(({ ctx }) => ctx.runtime.console.approvals.pending()),
  /** Records the decision; once the gate is decided the run resumes in the worker pool. */
  decide: approver.input(contract("approvals-decide")).mutation(async ({ ctx, input }) => {
    const result = await ctx.runtime.console.approvals.decide(input, ctx.operator);
    const run = result.releasable
      ? await ctx.executor.release({ runId: input.runId, gateId: input.gateId })
      : null;
    return { ...result, run };
  }),
  setPolicy: admin
    .input(contract("approvals-set-policy"))
    .mutation(({ ctx, input }) => ctx.runtime.console.approvals.setPolicy(input)),
  /** Runs that start waiting for a human (SSE). */
  onNew: viewer.subscription(async function* ({ ctx, signal }) {
    for await (const event of ctx.events.runs(signal)) {
      if (event.status === "needs_approval") yield event satisfies RunEvent;
    }
  }),
});

const receipts = router({
  dag: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.evidence.dag(input.runId)),
  /** One page of a run's receipt graph (for runs too large for `dag`), by cursor. */
  page: viewer.input(contract("receipt-page")).query(({ ctx, input }) =>
    ctx.runtime.console.evidence.page(input.runId, {
      ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
      ...(input.limit !== undefined ? { limit: input.limit } : {}),
    }),
  ),
  bundle: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.evidence.bundle(input.runId)),
  get: viewer
    .input(contract("receipt-ref"))
    .query(({ ctx, input }) => ctx.runtime.historyDetail(input.receiptId)),
  /**
   * Re-verifies one receipt now (`runx.receipt_report.v1`): signer, commitments, and each
   * check by name with its result in plain words, the failed one named.
   */
  verify: viewer
    .input(contract("receipt-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.evidence.report(input.receiptId)),
});

const skills = router({
  /**
   * The catalog: workspace skills and local-registry records whose name, ref, description or
   * tags match, with trust tier, runners and each runner's inputs.
   */
  search: viewer
    .input(contract("skills-search"))
    .query(({ ctx, input }) => ctx.runtime.catalog.search(input)),
  /** One skill's runners and input declarations (what the start form is built from). */
  get: viewer
    .input(contract("skill-ref"))
    .query(({ ctx, input }) => ctx.runtime.catalog.get(input.skill)),
});

/** Adapter dispatch attempts of a run and cancelling the one in flight. */
const adapters = router({
  /**
   * A run's recorded dispatch attempts, oldest first, each with its signed receipt's id and
   * verification, plus the attempts in flight (launched, not yet recorded).
   */
  attempts: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.adapters.state(input.runId)),
  /**
   * The kept logs of a run's attempts (bounded and scrubbed when written), each checked against
   * the digest its dispatch receipt records; a page shows at most 64 KiB of one log.
   */
  logs: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.adapters.logs(input.runId)),
  /** Asks the run's dispatch in flight (in any process) to stop; its attempt seals `cancelled`. */
  cancel: approver
    .input(contract("run-ref"))
    .mutation(({ ctx, input }) => ctx.runtime.adapters.cancel(input.runId)),
});

/** Read-only views of the data store for viewers (bindings never include secrets). */
const data = router({
  /** Whether data sources are configured (a broken data-sources.json is reported, not thrown). */
  status: viewer.query(async ({ ctx }) => {
    try {
      const view = await ctx.runtime.dataSources();
      return { available: true as const, sources: view.sources.length, reason: null };
    } catch (error) {
      return { available: false as const, sources: 0, reason: toTrpcError(error).message };
    }
  }),
  /** Configured data sources (non-secret view) and the implicit local:// rule. */
  sources: viewer.query(({ ctx }) => ctx.runtime.dataSources()),
  /** The newest events of one stream (limit 1–500, default 20). */
  tail: viewer
    .input(contract("data-tail"))
    .query(({ ctx, input }) => ctx.runtime.dataTail({ ...input, limit: input.limit ?? 20 })),
});

/** The API's root router. */
export const appRouter = router({ auth, runs, approvals, receipts, skills, data, adapters });

/** The hand-off type for apps/web (`import type { AppRouter } from "@runx/api/router"`). */
export type AppRouter = typeof appRouter;
