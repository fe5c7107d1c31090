import { ErrorNotice } from "./ErrorNotice";
import type { ApiProblem } from "@/lib/api-problem";

/**
 * A page-level failure to load from the API: its plain message, and the codes in a details
 * disclosure when the page passes the problem along.
 */
export function ApiError({
  title,
  error,
  problem,
}: {
  title: string;
  error: string;
  problem?: ApiProblem;
}) {
  return (
    <section className="page">
      <h1>{title}</h1>
      <ErrorNotice problem={{ code: null, path: null, status: null, ...problem, message: error }} />
    </section>
  );
}
