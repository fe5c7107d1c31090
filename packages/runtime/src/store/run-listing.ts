/**
 * The console's filtered run listing: filters as SQL predicates the run indexes serve, keyset
 * pages in both directions, the count of matching runs, and "waiting for an operator". Part of
 * the console store (console-store.ts), over the same drizzle handle.
 */
import { and, asc, count, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { SQL } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { RuntimeError } from "../errors.js";
import type { DetailedOutcome } from "../contracts/envelope.js";
import { decodeRunCursor, encodeRunCursor } from "./run-cursor.js";
import { approvalDecisions, gatePolicies, runInitiators, runs } from "./schema.js";
import { MAX_PAGE_SIZE } from "./types.js";
import type { RunRecord, RunStatus } from "./types.js";

/**
 * Runs paused for something one operator (an approver or admin) can still do: an agent or
 * input request, or an approval gate they have not decided on the run's current pause and may
 * decide (not the run's initiator when the gate's policy excludes the initiator, and not a run
 * without a recorded initiator when an explicit policy excludes it: console/approvals.ts
 * refuses both).
 */
export interface AwaitingFilter {
  operatorId: string;
  /** `forbidInitiator` of the policy that applies when no gate policy row matches. */
  defaultForbidInitiator: boolean;
}

/** Filters of the console's run listing (all optional ones combine with AND). */
export interface RunFilter {
  limit: number;
  /** `nextCursor` or `prevCursor` of an earlier page. */
  cursor?: string | null;
  status?: RunStatus;
  outcome?: DetailedOutcome;
  /** Exact skill name. */
  skillName?: string;
  /** Part of the skill name, in any case. */
  skillSearch?: string;
  /** Inclusive lower bound on `created_ms`. */
  fromMs?: number;
  /** Exclusive upper bound on `created_ms`. */
  toMs?: number;
  awaiting?: AwaitingFilter;
}

/** One page of the filtered listing, newest first. */
export interface FilteredRunPage {
  runs: RunRecord[];
  /** Older runs (null on the last page). */
  nextCursor: string | null;
  /** Newer runs (null on the first page). */
  prevCursor: string | null;
  /** How many runs match the filters (the same on every page). */
  total: number;
  /** True when the count stopped at `total` and more runs match (see WAITING_COUNT_CAP). */
  totalCapped: boolean;
}

/**
 * Where "waiting for an operator" stops counting: deciding it reads each paused run's requests,
 * gate policy, initiator and votes, so an exact count grows with the number of paused runs,
 * while a page stops at its last row.
 */
export const WAITING_COUNT_CAP = 1000;

/** Above this many skill names matching a search, the search filters runs by pattern. */
const MAX_SEARCH_NAMES = 500;

const POSITION = sql`(${runs.createdMs}, ${runs.id})`;

/** The run's pending requests as a JSON array (a value that is not JSON reads as none). */
const REQUESTS = sql`(CASE WHEN json_valid(${runs.requestsJson}) THEN ${runs.requestsJson} ELSE '[]' END)`;

/**
 * "Waiting for this operator" as a predicate. The gate policy that applies is the most
 * specific row for (skill, gate): exact, skill + `*`, `*` + gate, `*` + `*` (as
 * ConsoleStore.findGatePolicy ranks them); a vote counts on the pause whose `deferred` receipt
 * is the run's `receipt_id` (pauses set it; console/approvals.ts reads the same id from the
 * checkpoint).
 */
function awaitingPredicate(who: AwaitingFilter): SQL {
  const gate = sql`json_extract(r.value, '$.id')`;
  const forbid = sql`(SELECT ${gatePolicies.forbidInitiator} FROM ${gatePolicies} WHERE ${gatePolicies.skillName} IN (${runs.skillName}, '*') AND ${gatePolicies.gateId} IN (${gate}, '*') ORDER BY (${gatePolicies.skillName} = '*') * 2 + (${gatePolicies.gateId} = '*') LIMIT 1)`;
  const decided = sql`EXISTS (SELECT 1 FROM ${approvalDecisions} WHERE ${approvalDecisions.runId} = ${runs.id} AND ${approvalDecisions.gateId} = ${gate} AND ${approvalDecisions.pauseReceiptId} = ${runs.receiptId} AND ${approvalDecisions.operatorId} = ${who.operatorId})`;
  const startedByThem = sql`EXISTS (SELECT 1 FROM ${runInitiators} WHERE ${runInitiators.runId} = ${runs.id} AND ${runInitiators.operatorId} = ${who.operatorId})`;
  const startedInConsole = sql`EXISTS (SELECT 1 FROM ${runInitiators} WHERE ${runInitiators.runId} = ${runs.id})`;
  const decidable = sql`json_extract(r.value, '$.kind') = 'approval' AND NOT ${decided} AND NOT (coalesce(${forbid}, ${who.defaultForbidInitiator ? 1 : 0}) = 1 AND ${startedByThem}) AND NOT (coalesce(${forbid}, 0) = 1 AND NOT ${startedInConsole})`;
  const gates = sql`EXISTS (SELECT 1 FROM json_each(${REQUESTS}) AS r WHERE ${decidable})`;
  // Every approver may answer an agent or input pause, told by the outcome column alone (no
  // row is read); only an approval pause needs its gates read.
  return sql`${runs.outcome} IN ('paused_for_agent', 'paused_for_input', 'paused_for_approval') AND (${runs.outcome} <> 'paused_for_approval' OR ${gates})`;
}

/** `%part%` for LIKE with `\` escaping the pattern characters of `part`. */
function containsPattern(part: string): string {
  return `%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The skill names of all runs, each once: a walk of `runs_skill_name_idx` that seeks to the next
 * name after each one (one index seek per name, however many runs each has).
 */
function skillNames(db: BetterSQLite3Database): string[] {
  const rows = db.all<{ name: string | null }>(
    sql`WITH RECURSIVE names(name) AS (SELECT min(${runs.skillName}) FROM ${runs} UNION ALL SELECT (SELECT min(${runs.skillName}) FROM ${runs} WHERE ${runs.skillName} > names.name) FROM names WHERE names.name IS NOT NULL) SELECT name FROM names`,
  );
  return rows.flatMap((r) => (r.name === null ? [] : [r.name]));
}

/**
 * A skill search as a predicate: the names that contain the text (any case), matched over the
 * distinct names rather than every run, then an IN list the skill indexes serve. Null when no
 * name matches.
 */
function skillSearchPredicate(db: BetterSQLite3Database, part: string): SQL | null {
  const needle = part.toLowerCase();
  const names = skillNames(db).filter((name) => name.toLowerCase().includes(needle));
  if (names.length === 0) return null;
  if (names.length > MAX_SEARCH_NAMES) {
    // So many names match that the runs are dense in them: a pattern over the rows is cheap.
    return sql`${runs.skillName} LIKE ${containsPattern(part)} ESCAPE '\\'`;
  }
  return inArray(runs.skillName, names);
}

/**
 * The outcomes that only one status has, for the statuses they tell apart exactly (a run that
 * runs or waits has one of these outcomes, and no other run does): a status filter on them is
 * the outcome filter, which the outcome indexes serve without reading the run rows.
 */
const OUTCOMES_OF_STATUS: Partial<Record<RunStatus, DetailedOutcome[]>> = {
  running: ["running"],
  needs_agent: ["paused_for_agent", "paused_for_input"],
  needs_approval: ["paused_for_approval"],
};

function statusPredicate(status: RunStatus): SQL {
  const outcomes = OUTCOMES_OF_STATUS[status];
  return outcomes !== undefined ? inArray(runs.outcome, outcomes) : eq(runs.status, status);
}

function filterPredicates(db: BetterSQLite3Database, filter: RunFilter): SQL[] | null {
  const where: SQL[] = [];
  if (filter.status !== undefined) where.push(statusPredicate(filter.status));
  if (filter.outcome !== undefined) where.push(eq(runs.outcome, filter.outcome));
  if (filter.skillName !== undefined) where.push(eq(runs.skillName, filter.skillName));
  if (filter.skillSearch !== undefined) {
    const search = skillSearchPredicate(db, filter.skillSearch);
    if (search === null) return null;
    where.push(search);
  }
  if (filter.fromMs !== undefined) where.push(gte(runs.createdMs, filter.fromMs));
  if (filter.toMs !== undefined) where.push(lt(runs.createdMs, filter.toMs));
  if (filter.awaiting !== undefined) where.push(awaitingPredicate(filter.awaiting));
  return where;
}

/** The filtered listing over a drizzle handle (the caller maps driver failures). */
export function listRunsFiltered(db: BetterSQLite3Database, filter: RunFilter): FilteredRunPage {
  if (!Number.isInteger(filter.limit) || filter.limit < 1 || filter.limit > MAX_PAGE_SIZE) {
    throw new RuntimeError("USAGE", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, {
      path: "limit",
    });
  }
  const cursor =
    filter.cursor === undefined || filter.cursor === null
      ? undefined
      : decodeRunCursor(filter.cursor);
  const where = filterPredicates(db, filter);
  if (where === null) {
    return { runs: [], nextCursor: null, prevCursor: null, total: 0, totalCapped: false };
  }
  let total: number;
  let totalCapped = false;
  if (filter.awaiting !== undefined) {
    const seen = db
      .select({ id: runs.id })
      .from(runs)
      .where(and(...where))
      .limit(WAITING_COUNT_CAP + 1)
      .all().length;
    totalCapped = seen > WAITING_COUNT_CAP;
    total = Math.min(seen, WAITING_COUNT_CAP);
  } else {
    total =
      db
        .select({ n: count() })
        .from(runs)
        .where(and(...where))
        .get()?.n ?? 0;
  }
  // Row-value comparisons seek straight into the (…, created_ms, id) indexes.
  const olderThan = (at: { createdMs: number; id: string }) =>
    sql`${POSITION} < (${at.createdMs}, ${at.id})`;
  const newerThan = (at: { createdMs: number; id: string }) =>
    sql`${POSITION} > (${at.createdMs}, ${at.id})`;
  const exists = (edge: SQL): boolean =>
    db
      .select({ id: runs.id })
      .from(runs)
      .where(and(...where, edge))
      .limit(1)
      .all().length > 0;
  const at = (run: RunRecord) => ({ createdMs: run.createdMs, id: run.id });
  const page = (rows: RunRecord[], newer: boolean, older: boolean): FilteredRunPage => {
    const first = rows[0];
    const last = rows[rows.length - 1];
    return {
      runs: rows,
      prevCursor:
        newer && first !== undefined ? encodeRunCursor({ ...at(first), direction: "newer" }) : null,
      nextCursor: older && last !== undefined ? encodeRunCursor(at(last)) : null,
      total,
      totalCapped,
    };
  };

  if (cursor?.direction === "newer") {
    const rows = db
      .select()
      .from(runs)
      .where(and(...where, newerThan(cursor)))
      .orderBy(asc(runs.createdMs), asc(runs.id))
      .limit(filter.limit + 1)
      .all();
    // Fewer newer runs than a page: that is the first page (newest runs first, full).
    if (rows.length > filter.limit) {
      const shown = rows.slice(0, filter.limit).reverse();
      return page(shown, true, exists(olderThan(at(shown[shown.length - 1]!))));
    }
  }
  const after = cursor?.direction === "older" ? cursor : undefined;
  const rows = db
    .select()
    .from(runs)
    .where(and(...where, ...(after !== undefined ? [olderThan(after)] : [])))
    .orderBy(desc(runs.createdMs), desc(runs.id))
    .limit(filter.limit + 1)
    .all();
  const shown = rows.slice(0, filter.limit);
  const newest = shown[0];
  // A page reached from a cursor has newer runs unless they have all gone since.
  const newer = after !== undefined && exists(newerThan(newest !== undefined ? at(newest) : after));
  if (newest === undefined && newer) {
    // Past the end (the runs after the cursor went away): offer the way back from the cursor.
    return {
      runs: [],
      prevCursor: encodeRunCursor({ ...after, direction: "newer" }),
      nextCursor: null,
      total,
      totalCapped,
    };
  }
  return page(shown, newer, rows.length > filter.limit);
}
