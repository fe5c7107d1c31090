import type { Metadata } from "next";
import Link from "next/link";
import { LiveRefresh } from "@/components/LiveRefresh";
import { OutcomeBadge } from "@/components/OutcomeBadge";
import { RUN_STATUSES } from "@/lib/api-types";
import type { RunList } from "@/lib/api-types";
import { formatTime } from "@/lib/format";
import { OUTCOME_GROUPS, OUTCOME_VIEWS, durationText, runCount } from "@/lib/outcomes";
import {
  PAGE_SIZES,
  isFiltered,
  listInput,
  readFilters,
  runsHref,
  toLocalInput,
} from "@/lib/runs-filter";
import type { RunFilters, SearchParams } from "@/lib/runs-filter";
import { load } from "@/lib/server-api";
import { TableWrap } from "@/components/TableWrap";

export const metadata: Metadata = { title: "Runs" };

/** The two views of the list: every run, or those waiting for the signed-in operator. */
function Views({ filters }: { filters: RunFilters }) {
  const views = [
    { view: "all", label: "All runs" },
    { view: "waiting", label: "Waiting for me" },
  ] as const;
  return (
    <nav className="runs-views" aria-label="Run views">
      {views.map(({ view, label }) => (
        <Link
          key={view}
          href={runsHref({ ...filters, view, cursor: undefined })}
          aria-current={filters.view === view ? "page" : undefined}
        >
          {label}
        </Link>
      ))}
    </nav>
  );
}

function Filters({ filters }: { filters: RunFilters }) {
  return (
    <form className="filters card" method="get" action="/runs" aria-label="Filter runs">
      {filters.view === "waiting" && <input type="hidden" name="view" value="waiting" />}
      {filters.skill && <input type="hidden" name="skill" value={filters.skill} />}
      <div className="field">
        <label htmlFor="f-outcome">Outcome</label>
        <select id="f-outcome" name="outcome" defaultValue={filters.outcome ?? ""}>
          <option value="">any</option>
          {OUTCOME_GROUPS.map((group) => (
            <optgroup key={group.label} label={group.label}>
              {group.outcomes.map((o) => (
                <option key={o} value={o}>
                  {OUTCOME_VIEWS[o].label}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-search">Skill contains</label>
        <input
          id="f-search"
          name="search"
          type="search"
          defaultValue={filters.search ?? ""}
          placeholder="echo"
        />
      </div>
      <div className="field">
        <label htmlFor="f-status">Record status</label>
        <select id="f-status" name="status" defaultValue={filters.status ?? ""}>
          <option value="">any</option>
          {RUN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-from">From (UTC)</label>
        <input
          id="f-from"
          name="from"
          type="datetime-local"
          defaultValue={toLocalInput(filters.from)}
        />
      </div>
      <div className="field">
        <label htmlFor="f-to">To (UTC)</label>
        <input id="f-to" name="to" type="datetime-local" defaultValue={toLocalInput(filters.to)} />
      </div>
      <div className="field">
        <label htmlFor="f-limit">Per page</label>
        <select id="f-limit" name="limit" defaultValue={String(filters.limit ?? 50)}>
          {[...new Set([...PAGE_SIZES, filters.limit ?? 50])]
            .sort((a, b) => a - b)
            .map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
        </select>
      </div>
      <div className="field actions">
        <button type="submit" className="button primary">
          Apply filters
        </button>
        {isFiltered(filters) && (
          <Link
            href={runsHref({
              view: filters.view,
              outcome: undefined,
              search: undefined,
              status: undefined,
              skill: undefined,
              from: undefined,
              to: undefined,
              waiting: false,
              cursor: undefined,
              limit: filters.limit,
            })}
            className="button ghost"
          >
            Clear
          </Link>
        )}
      </div>
    </form>
  );
}

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const filters = readFilters(await searchParams);
  const loaded = await load(async (api) => {
    const [me, page] = await Promise.all([
      api.auth.me.query(),
      api.runs.list.query(listInput(filters)),
    ]);
    return { me, page };
  });
  const waitingView = filters.view === "waiting";
  const viewer = loaded.ok && loaded.value.me.role === "viewer";
  return (
    <section className="page">
      {/* New runs and status changes from any process (console, CLI, MCP, another API). */}
      <LiveRefresh source="runs" />
      <h1>Runs</h1>
      <Views filters={filters} />
      {waitingView && (
        <p className="muted">
          {viewer
            ? "You are a viewer: nothing waits for you, since viewers neither decide approvals nor answer requests."
            : "Runs paused for you: approval gates you may still decide (not yet decided by you, and not your own run where the gate's policy excludes its initiator), and every agent or input request."}
        </p>
      )}
      <Filters filters={filters} />
      {filters.skill && (
        <p>
          <span className="filter-chip">
            Skill: <span className="mono">{filters.skill}</span>
            <Link
              href={runsHref({ ...filters, skill: undefined, cursor: undefined })}
              aria-label={`Remove the skill filter ${filters.skill}`}
            >
              ✕
            </Link>
          </span>
        </p>
      )}
      {!loaded.ok ? (
        <p role="alert" className="error">
          {loaded.error}
        </p>
      ) : (
        <RunsTable filters={filters} page={loaded.value.page} />
      )}
    </section>
  );
}

function RunsTable({ filters, page }: { filters: RunFilters; page: RunList }) {
  const total = runCount(page.total, page.totalCapped);
  return (
    <>
      <p className="runs-total" data-testid="runs-total" aria-live="polite">
        {total}
      </p>
      {page.items.length === 0 ? (
        <p className="empty">
          {filters.view === "waiting" && !isFiltered(filters)
            ? "Nothing is waiting for you."
            : isFiltered(filters) || filters.cursor
              ? "No runs match these filters."
              : "No runs yet."}{" "}
          {!isFiltered(filters) && filters.view === "all" && (
            <Link href="/skills">Start one from the skill catalog.</Link>
          )}
        </p>
      ) : (
        <TableWrap label="Table of runs">
          <table className="table runs-table">
            <caption className="visually-hidden">Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Outcome</th>
                <th scope="col">Skill</th>
                <th scope="col">Initiator</th>
                <th scope="col">Duration</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((run) => (
                <tr key={run.id} data-testid="run-row" data-run-id={run.id}>
                  <td>
                    <Link href={`/runs/${encodeURIComponent(run.id)}`} className="mono">
                      {run.id}
                    </Link>
                  </td>
                  <td>
                    <OutcomeBadge outcome={run.outcome} testId="run-outcome" />
                  </td>
                  <td>
                    <Link
                      href={runsHref({ ...filters, skill: run.skill, cursor: undefined })}
                      title={`Only runs of ${run.skill}`}
                    >
                      {run.skill}
                    </Link>
                  </td>
                  {run.initiator !== null ? (
                    <td>{run.initiator}</td>
                  ) : (
                    <td
                      className="initiator-none"
                      title="Started outside the console (the CLI, MCP or the runtime's API): no operator is recorded"
                    >
                      CLI / MCP
                    </td>
                  )}
                  <td className="nowrap">
                    {run.durationMs === null ? (
                      <span className="muted" title="Still running or waiting">
                        —
                      </span>
                    ) : (
                      durationText(run.durationMs)
                    )}
                  </td>
                  <td className="nowrap">{formatTime(run.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager filters={filters} page={page} />
    </>
  );
}

/** Previous and Next: keyset pages both ways (a cursor anchors the page, so rows never shift). */
function Pager({ filters, page }: { filters: RunFilters; page: RunList }) {
  if (page.prevCursor === null && page.nextCursor === null) return null;
  return (
    <nav className="pager" aria-label="Pagination">
      {page.prevCursor !== null && (
        <Link href={runsHref(filters, page.prevCursor)} className="button" rel="prev">
          ← Previous
        </Link>
      )}
      {page.nextCursor !== null && (
        <Link href={runsHref(filters, page.nextCursor)} className="button" rel="next">
          Next →
        </Link>
      )}
    </nav>
  );
}
