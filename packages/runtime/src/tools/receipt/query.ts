/**
 * `receipt.query`'s reading of the history (`runx.receipt.query.v1`): upstream's history
 * filter (case-insensitive `query` over name, id, source, actors and artifact types; `skill`
 * as a name substring; exact `status`, `source`, `actor`, `artifact_type`; an inclusive
 * `since`/`until` window, `period` counting back from `as_of` when `since` is absent), cut
 * to `limit` rows across receipts and paused runs together, newest first.
 */
import { RuntimeError } from "../../errors.js";
import type { Json, JsonRecord } from "../types.js";
import type { HistoryRow, PendingRun } from "./history.js";

/** The tool's input after schema validation. */
export interface ReceiptQueryInput {
  query?: string;
  skill?: string;
  status?: string;
  source?: string;
  actor?: string;
  artifact_type?: string;
  since?: string;
  until?: string;
  period?: string;
  as_of?: string;
  limit?: number;
  receipt_ids?: string[];
  verify_chain?: boolean;
}

/** The filter as the packet echoes it (trimmed values, `since` resolved). */
export interface HistoryFilter {
  query: string | null;
  skill: string | null;
  status: string | null;
  source: string | null;
  actor: string | null;
  artifact_type: string | null;
  since: string | null;
  until: string | null;
  limit: number;
}

function invalid(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `receipt.query: ${message}`, { path });
}

function optional(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? "";
  return trimmed === "" ? null : trimmed;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when it is not one. */
export function rfc3339Millis(value: string): number | undefined {
  const m = RFC3339.exec(value);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (
    year === undefined ||
    month === undefined ||
    day === undefined ||
    hour === undefined ||
    minute === undefined ||
    second === undefined
  )
    return undefined;
  // A day past the month's end rolls over in Date.UTC; compare to refuse it.
  if (new Date(Date.UTC(year, month - 1, day)).getUTCMonth() !== month - 1) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const zone = m[8] ?? "Z";
  const sign = zone.startsWith("-") ? -1 : 1;
  const offset =
    zone === "Z" ? 0 : sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const fraction = m[7] === undefined ? 0 : Number(`0${m[7]}`) * 1000;
  return Date.UTC(year, month - 1, day, hour, minute, second) - offset * 60_000 + fraction;
}

/** `since`, or `period` (`7d`, `24h`) counted back from `as_of` (default: now). */
function resolveSince(input: ReceiptQueryInput, now: Date): string | null {
  const since = optional(input.since);
  if (since !== null) return since;
  const period = optional(input.period);
  if (period === null) return null;
  const m = /^(\d+)([dDhH])$/.exec(period);
  if (m === null) {
    if (!/[dDhH]$/.test(period)) throw invalid("period must use d or h units", "period");
    throw invalid("period must be a positive duration such as 7d or 24h", "period");
  }
  const amount = Number(m[1]);
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw invalid("period must be a positive duration such as 7d or 24h", "period");
  const asOfText = optional(input.as_of);
  const anchor = asOfText === null ? now.getTime() : rfc3339Millis(asOfText);
  if (anchor === undefined) throw invalid("as_of must be an RFC3339 timestamp", "as_of");
  const unit = (m[2] as string).toLowerCase() === "d" ? 86_400 : 3_600;
  const seconds = Math.floor(anchor / 1000) - amount * unit;
  const iso = new Date(seconds * 1000);
  if (Number.isNaN(iso.getTime()))
    throw invalid("period is outside the supported timestamp range", "period");
  return iso.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Validates the filter fields; `now` anchors a `period` without `as_of`. */
export function parseFilter(input: ReceiptQueryInput, now: Date): HistoryFilter {
  const filter: HistoryFilter = {
    query: optional(input.query),
    skill: optional(input.skill),
    status: optional(input.status),
    source: optional(input.source),
    actor: optional(input.actor),
    artifact_type: optional(input.artifact_type),
    since: resolveSince(input, now),
    until: optional(input.until),
    limit: input.limit ?? 1000,
  };
  for (const field of ["since", "until"] as const) {
    const value = filter[field];
    if (value !== null && rfc3339Millis(value) === undefined) {
      throw invalid(`invalid ${field} timestamp '${value}': expected RFC 3339 timestamp`, field);
    }
  }
  return filter;
}

/** Exact ids for a detailed read: trimmed, deduplicated, sorted; none when the list is empty. */
export function detailIds(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const ids = new Set<string>();
  values.forEach((value, index) => {
    const id = value.trim();
    if (id === "")
      throw invalid("receipt_ids entries must be non-empty strings", `receipt_ids.${index}`);
    ids.add(id);
  });
  return [...ids].sort();
}

function inWindow(timestamp: string, filter: HistoryFilter): boolean {
  const at = rfc3339Millis(timestamp);
  if (at === undefined) return filter.since === null && filter.until === null;
  const since = filter.since === null ? undefined : rfc3339Millis(filter.since);
  const until = filter.until === null ? undefined : rfc3339Millis(filter.until);
  return (since === undefined || at >= since) && (until === undefined || at <= until);
}

const lower = (value: string | null): string | null =>
  value === null ? null : value.toLowerCase();

/**
 * True when a receipt row passes the filter. A row whose receipt no longer decodes has no
 * name, status or source, so a filter on one of those never matches it; `query` still
 * matches its id and the time window its index line's `created_at`.
 */
export function rowMatches(row: HistoryRow, filter: HistoryFilter): boolean {
  const query = lower(filter.query);
  const has = (text: string | null, needle: string) =>
    text !== null && text.toLowerCase().includes(needle);
  const anyEqual = (values: readonly string[], wanted: string) =>
    values.some((v) => v.toLowerCase() === wanted);
  if (
    query !== null &&
    !(
      has(row.name, query) ||
      has(row.id, query) ||
      has(row.source_type, query) ||
      row.actors.some((a) => has(a, query)) ||
      row.artifact_types.some((t) => has(t, query))
    )
  )
    return false;
  const skill = lower(filter.skill);
  if (skill !== null && !has(row.name, skill)) return false;
  const status = lower(filter.status);
  if (status !== null && row.status?.toLowerCase() !== status) return false;
  const source = lower(filter.source);
  if (source !== null && row.source_type?.toLowerCase() !== source) return false;
  const actor = lower(filter.actor);
  if (actor !== null && !anyEqual(row.actors, actor)) return false;
  const type = lower(filter.artifact_type);
  if (type !== null && !anyEqual(row.artifact_types, type)) return false;
  return inWindow(row.created_at, filter);
}

/** True when a paused run passes the filter (source, actor and artifact filters exclude it). */
export function pendingMatches(run: PendingRun, filter: HistoryFilter): boolean {
  if (filter.source !== null || filter.actor !== null || filter.artifact_type !== null)
    return false;
  const query = lower(filter.query);
  const has = (text: string, needle: string) => text.toLowerCase().includes(needle);
  if (
    query !== null &&
    !(has(run.name, query) || has(run.id, query) || has(run.selectedRunner, query))
  )
    return false;
  const skill = lower(filter.skill);
  if (skill !== null && !has(run.name, skill)) return false;
  const status = lower(filter.status);
  if (status !== null && run.status.toLowerCase() !== status) return false;
  return inWindow(run.startedAt, filter);
}

/** Keeps the newest `limit` entries of receipts and paused runs taken together. */
export function truncateCombined(
  rows: HistoryRow[],
  pending: PendingRun[],
  limit: number,
): { rows: HistoryRow[]; pending: PendingRun[] } {
  let r = 0;
  let p = 0;
  while (r + p < limit && (r < rows.length || p < pending.length)) {
    const row = rows[r];
    const run = pending[p];
    if (run === undefined || (row !== undefined && row.created_at >= run.startedAt)) r++;
    else p++;
  }
  return { rows: rows.slice(0, r), pending: pending.slice(0, p) };
}

/** The filter as the packet echoes it. */
export function filterJson(filter: HistoryFilter, ids: readonly string[] | undefined): JsonRecord {
  return {
    ...filter,
    receipt_ids: [...(ids ?? [])] as Json[],
  };
}
