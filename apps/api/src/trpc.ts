/**
 * tRPC initialisation: the request context, the error formatter (runtime code and field path
 * ride along in `data`), and procedures per required role.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { consoleInput, isRuntimeError, roleAtLeast } from "@runx/runtime";
import type {
  ConsoleInputName,
  ConsoleInputs,
  Operator,
  OperatorRole,
  Runtime,
  SkillRunEnvelope,
} from "@runx/runtime";
import { toTrpcError } from "./errors.js";
import type { ApiEvents } from "./events.js";
import type { SessionKeys } from "./session.js";
import type { AuthThrottle } from "./throttle.js";

/** A run job's outcome: settled within the wait (with its envelope) or still running. */
export type ExecutorResult =
  | { runId: string; state: "settled"; envelope: SkillRunEnvelope }
  | { runId: string; state: "running" };

/** Runs work off the request path (the worker pool in production). */
export interface RunExecutor {
  start(job: {
    runId: string;
    ref: string;
    runner?: string;
    inputs: Record<string, unknown>;
  }): Promise<ExecutorResult>;
  release(job: { runId: string; gateId: string }): Promise<ExecutorResult>;
  answer(job: {
    runId: string;
    answers: Record<string, unknown>;
    /** The operator answering (the run's resume event names them). */
    by?: string;
    /** Their note (the resume event's reason). */
    note?: string;
  }): Promise<ExecutorResult>;
}

/** Per-request context. */
export interface ApiContext {
  runtime: Runtime;
  sessions: SessionKeys;
  executor: RunExecutor;
  events: ApiEvents;
  /** The authenticated operator (session cookie or Bearer token), or null. */
  operator: Operator | null;
  /** The id of the session the request came with (a live one), or null. */
  sessionId: string | null;
  /**
   * The request came with a session cookie that opens no session any more (its cookies are
   * expired on this answer: server.ts). Absent for callers without cookies (direct calls).
   */
  sessionEnded?: boolean;
  /** The client's address (./client-address.ts), the key of per-address throttling. */
  clientAddress: string;
  /** Throttling of credential guessing (sign-in, bootstrap). */
  throttle: AuthThrottle;
  /** Sets the session cookies on the response (null signs out). */
  setSession(session: { jwt: string; csrf: string } | null): void;
}

/** What a person whose session cookie no longer opens a session is told. */
export const SESSION_ENDED = "Your session ended; sign in again.";

const t = initTRPC.context<ApiContext>().create({
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      data: {
        ...shape.data,
        stack: undefined,
        runtimeCode: isRuntimeError(cause) ? cause.code : null,
        path: isRuntimeError(cause) ? (cause.details.path ?? null) : null,
        // A refused answer names its request and field, so a form can point at the field.
        ...(isRuntimeError(cause) && typeof cause.details.request_id === "string"
          ? {
              requestId: cause.details.request_id,
              field: typeof cause.details.field === "string" ? cause.details.field : null,
            }
          : {}),
        // Throttled sign-ins: the server turns it into Retry-After (server.ts responseMeta).
        ...(isRuntimeError(cause) && typeof cause.details.retryAfterSeconds === "number"
          ? { retryAfterSeconds: cause.details.retryAfterSeconds }
          : {}),
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Maps every thrown value to a TRPCError through the one table. */
const mapped = t.procedure.use(async ({ next }) => {
  const result = await next();
  if (!result.ok) throw toTrpcError(result.error.cause ?? result.error);
  return result;
});

/** No authentication required. */
export const publicProcedure = mapped;

/** Requires an operator with at least `role`: 401 without one, 403 below the role. */
export function roleProcedure(role: OperatorRole) {
  return mapped.use(({ ctx, next }) => {
    if (ctx.operator === null) {
      throw new TRPCError({
        code: "UNAUTHORIZED",
        message: ctx.sessionEnded === true ? SESSION_ENDED : "sign in first",
      });
    }
    if (!roleAtLeast(ctx.operator.role, role)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `this needs the ${role} role (you are ${ctx.operator.role})`,
      });
    }
    return next({ ctx: { ...ctx, operator: ctx.operator } });
  });
}

/** A tRPC input parser backed by the runtime's JSON Schema contract `name`. */
export function contract<N extends ConsoleInputName>(name: N) {
  return (value: unknown): ConsoleInputs[N] => {
    try {
      return consoleInput(name, value);
    } catch (error) {
      throw toTrpcError(error);
    }
  };
}
