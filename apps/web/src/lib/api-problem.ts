/**
 * Errors from the API as the console shows them (client components and server pages alike).
 */
import { TRPCClientError } from "@trpc/client";
import type { AppRouter } from "./api-types";

/**
 * What went wrong, for a person and apart from it for whoever debugs: the API's message is
 * already plain words naming the field once (packages/runtime/src/parser/field-problem.ts);
 * its codes, the field's machine path and the HTTP status go in a details disclosure
 * (components/ErrorNotice.tsx), never into the sentence.
 */
export interface ApiProblem {
  message: string;
  /** The runtime's code (`INPUT_INVALID`), else the API's (`FORBIDDEN`); null for a network failure. */
  code: string | null;
  /** The offending field's dotted path, when the API names one. */
  path: string | null;
  status: number | null;
}

/** An error from the API (or the network) as an ApiProblem. */
export function errorInfo(error: unknown): ApiProblem {
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data as
      { code?: unknown; runtimeCode?: unknown; path?: unknown; httpStatus?: unknown } | undefined;
    const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
    const status = typeof data?.httpStatus === "number" ? data.httpStatus : null;
    // A fetch that never reached the API has no data at all.
    if (data === undefined || data === null) {
      return {
        message: `The console could not reach the API (${error.message}).`,
        code: null,
        path: null,
        status,
      };
    }
    return {
      message: error.message,
      code: text(data.runtimeCode) ?? text(data.code),
      path: text(data.path),
      status,
    };
  }
  return {
    message: error instanceof Error ? error.message : String(error),
    code: null,
    path: null,
    status: null,
  };
}
