/**
 * URL ⇄ runs.list input. The URL is the deep link (`/runs?view=waiting&outcome=…&search=…
 * &skill=…&status=…&from=…&to=…&waiting=1&cursor=…`); this turns it into the API's filter,
 * normalising the browser's `datetime-local` values (no zone) to RFC 3339 UTC. `search` is
 * part of a skill name, `skill` one exact name (a row's skill link).
 */
import type { RUN_STATUSES, RunsListInput } from "./api-types";
import type { Outcome } from "./outcomes";

export type SearchParams = Record<string, string | string[] | undefined>;

const first = (v: string | string[] | undefined): string | undefined =>
  (Array.isArray(v) ? v[0] : v)?.trim() || undefined;

/** `2024-05-01T10:30` → `2024-05-01T10:30:00Z`; RFC 3339 stays; anything else is kept for the API to refuse. */
export function toRfc3339(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return `${value}:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)) return `${value}Z`;
  return value;
}

/** RFC 3339 → the `datetime-local` control's value (UTC wall time). */
export function toLocalInput(value: string | undefined): string {
  if (value === undefined) return "";
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})/.exec(value);
  return m?.[1] ?? "";
}

export interface RunFilters {
  /** `waiting`: the runs waiting for the signed-in operator. */
  view: "all" | "waiting";
  outcome: string | undefined;
  search: string | undefined;
  status: string | undefined;
  skill: string | undefined;
  from: string | undefined;
  to: string | undefined;
  waiting: boolean;
  cursor: string | undefined;
  /** Runs per page (1–200); undefined: 50. */
  limit?: number | undefined;
}

/** The page sizes the list offers. */
export const PAGE_SIZES = [10, 25, 50, 100] as const;

function pageSize(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,3}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= 1 && n <= 200 ? n : undefined;
}

/** Reads the filters of a `/runs` URL. */
export function readFilters(params: SearchParams): RunFilters {
  return {
    view: first(params.view) === "waiting" ? "waiting" : "all",
    outcome: first(params.outcome),
    search: first(params.search),
    status: first(params.status),
    skill: first(params.skill),
    from: first(params.from),
    to: first(params.to),
    waiting: first(params.waiting) === "1",
    cursor: first(params.cursor),
    limit: pageSize(first(params.limit)),
  };
}

/**
 * The runs.list input for these filters (unknown statuses and outcomes go through so the API
 * names them).
 */
export function listInput(filters: RunFilters, limit = filters.limit ?? 50): RunsListInput {
  const input: RunsListInput = { limit };
  if (filters.view === "waiting") input.waitingForMe = true;
  if (filters.outcome !== undefined) input.outcome = filters.outcome as Outcome;
  if (filters.search !== undefined) input.skillSearch = filters.search;
  if (filters.status !== undefined) input.status = filters.status as (typeof RUN_STATUSES)[number];
  if (filters.skill !== undefined) input.skill = filters.skill;
  const from = toRfc3339(filters.from);
  const to = toRfc3339(filters.to);
  if (from !== undefined) input.from = from;
  if (to !== undefined) input.to = to;
  if (filters.waiting) input.waitingForApproval = true;
  if (filters.cursor !== undefined) input.cursor = filters.cursor;
  return input;
}

/** Whether any filter narrows the list (the view aside). */
export function isFiltered(filters: RunFilters): boolean {
  return Boolean(
    filters.outcome ||
    filters.search ||
    filters.status ||
    filters.skill ||
    filters.from ||
    filters.to ||
    filters.waiting,
  );
}

/** The `/runs` URL for filters (cursor optional), for links and pagination. */
export function runsHref(filters: RunFilters, cursor?: string | null): string {
  const q = new URLSearchParams();
  if (filters.view === "waiting") q.set("view", "waiting");
  if (filters.outcome) q.set("outcome", filters.outcome);
  if (filters.search) q.set("search", filters.search);
  if (filters.status) q.set("status", filters.status);
  if (filters.skill) q.set("skill", filters.skill);
  if (filters.from) q.set("from", filters.from);
  if (filters.to) q.set("to", filters.to);
  if (filters.waiting) q.set("waiting", "1");
  if (filters.limit !== undefined) q.set("limit", String(filters.limit));
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return s ? `/runs?${s}` : "/runs";
}
