/**
 * The API's routers. Each procedure: validate input against the runtime's JSON Schema
 * contract → one runtime (or executor) call → result. `AppRouter` is the hand-off type for
 * apps/web; the contract is documented in ../README.md.
 */
import { TRPCError } from "@trpc/server";
import { contract, publicProcedure, roleProcedure, router } from "./trpc.js";
import type { RunEvent } from "./events.js";

const viewer = roleProcedure("viewer");
const approver = roleProcedure("approver");
const admin = roleProcedure("admin");

const auth = router({
  /** Whether the first admin still has to be created, and who is signed in. */
  status: publicProcedure.query(({ ctx }) => ({
    bootstrapRequired: ctx.runtime.console.operators.count() === 0,
    operator: ctx.operator,
  })),
  /** Creates the first admin with the one-time bootstrap token and signs them in. */
  bootstrap: publicProcedure.input(contract("auth-bootstrap")).mutation(async ({ ctx, input }) => {
    const operator = await ctx.runtime.console.operators.redeemBootstrap(input);
    const session = await ctx.sessions.issue(operator.id);
    ctx.setSession(session);
    return { operator, csrfToken: session.csrf };
  }),
  /** Signs in; sets the session cookie and returns the CSRF token to echo on mutations. */
  login: publicProcedure.input(contract("auth-login")).mutation(async ({ ctx, input }) => {
    const operator = await ctx.runtime.console.operators.authenticate(
      input.username,
      input.password,
    );
    const session = await ctx.sessions.issue(operator.id);
    ctx.setSession(session);
    return { operator, csrfToken: session.csrf };
  }),
  logout: publicProcedure.mutation(({ ctx }) => {
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
  addOperator: admin
    .input(contract("operator-add"))
    .mutation(({ ctx, input }) => ctx.runtime.console.operators.add(input)),
  listOperators: admin.query(({ ctx }) => ctx.runtime.console.operators.list()),
  setOperatorDisabled: admin
    .input(contract("operator-set-disabled"))
    .mutation(({ ctx, input }) =>
      ctx.runtime.console.operators.setDisabled(input.username, input.disabled),
    ),
});

const runs = router({
  list: viewer
    .input(contract("runs-list"))
    .query(({ ctx, input }) => ctx.runtime.console.runs.list(input)),
  get: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.runs.detail(input.runId)),
  /** Starts a run in the worker pool; the initiator is recorded before it starts. */
  start: approver.input(contract("runs-start")).mutation(({ ctx, input }) => {
    const runId = ctx.runtime.console.newRunId();
    ctx.runtime.console.recordInitiator(runId, ctx.operator);
    return ctx.executor.start({
      runId,
      ref: input.skill,
      inputs: input.inputs,
      ...(input.runner !== undefined ? { runner: input.runner } : {}),
    });
  }),
  /** Answers agent/input requests with pasted JSON (approval gates are refused here). */
  answer: approver
    .input(contract("runs-answer"))
    .mutation(({ ctx, input }) => ctx.executor.answer(input)),
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
  bundle: viewer
    .input(contract("run-ref"))
    .query(({ ctx, input }) => ctx.runtime.console.evidence.bundle(input.runId)),
  get: viewer
    .input(contract("receipt-ref"))
    .query(({ ctx, input }) => ctx.runtime.historyDetail(input.receiptId)),
});

const skills = router({
  /** Workspace catalog; the query matches name or description (case-insensitive). */
  search: viewer.input(contract("skills-search")).query(async ({ ctx, input }) => {
    const q = (input.query ?? "").toLowerCase();
    const { items } = await ctx.runtime.listSkills();
    return items
      .filter((s) => q === "" || `${s.name}\n${s.description ?? ""}`.toLowerCase().includes(q))
      .slice(0, input.limit ?? 50);
  }),
});

/**
 * MINIMAL: the data-store operations are not in the runtime yet, so this router only says
 * so; it gains procedures when `createRuntime()` exposes the data store.
 */
const data = router({
  status: viewer.query(() => ({
    available: false as const,
    reason: "the runtime does not expose data-store operations yet",
  })),
  /** Placeholder so clients get a clear error instead of a missing procedure. */
  query: viewer.query(() => {
    throw new TRPCError({
      code: "NOT_IMPLEMENTED",
      message: "data-store operations are not available in this runtime",
    });
  }),
});

/** The API's root router. */
export const appRouter = router({ auth, runs, approvals, receipts, skills, data });

/** The hand-off type for apps/web (`import type { AppRouter } from "@runx/api/router"`). */
export type AppRouter = typeof appRouter;
