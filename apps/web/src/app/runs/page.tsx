import type { Metadata } from "next";
import Link from "next/link";
import { StatusBadge } from "@/components/StatusBadge";
import { RUN_STATUSES } from "@/lib/api-types";
import { formatTime } from "@/lib/format";
import { listInput, readFilters, runsHref, toLocalInput } from "@/lib/runs-filter";
import type { SearchParams } from "@/lib/runs-filter";
import { load } from "@/lib/server-api";

export const metadata: Metadata = { title: "Runs" };

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const filters = readFilters(await searchParams);
  const page = await load((api) => api.runs.list.query(listInput(filters)));
  const filtered = filters.status || filters.skill || filters.from || filters.to || filters.waiting;
  return (
    <section className="page">
      <h1>Runs</h1>
      <form className="filters card" method="get" action="/runs" aria-label="Filter runs">
        <div className="field">
          <label htmlFor="f-status">Status</label>
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
          <label htmlFor="f-skill">Skill</label>
          <input id="f-skill" name="skill" defaultValue={filters.skill ?? ""} placeholder="echo" />
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
          <input
            id="f-to"
            name="to"
            type="datetime-local"
            defaultValue={toLocalInput(filters.to)}
          />
        </div>
        <div className="field checkbox">
          <input
            id="f-waiting"
            name="waiting"
            type="checkbox"
            value="1"
            defaultChecked={filters.waiting}
          />
          <label htmlFor="f-waiting">Waiting for approval</label>
        </div>
        <div className="field actions">
          <button type="submit" className="button primary">
            Apply filters
          </button>
          {filtered && (
            <Link href="/runs" className="button ghost">
              Clear
            </Link>
          )}
        </div>
      </form>
      {!page.ok ? (
        <p role="alert" className="error">
          {page.error}
        </p>
      ) : page.value.items.length === 0 ? (
        <p className="empty">
          {filtered || filters.cursor ? "No runs match these filters." : "No runs yet."}{" "}
          <Link href="/skills">Start one from the skill catalog.</Link>
        </p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">Runs, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Skill</th>
                  <th scope="col">Status</th>
                  <th scope="col">Waiting for</th>
                  <th scope="col">Created</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {page.value.items.map((run) => (
                  <tr key={run.id}>
                    <td>
                      <Link href={`/runs/${encodeURIComponent(run.id)}`} className="mono">
                        {run.id}
                      </Link>
                    </td>
                    <td>
                      <Link href={runsHref({ ...filters, skill: run.skill, cursor: undefined })}>
                        {run.skill}
                      </Link>
                    </td>
                    <td>
                      <StatusBadge status={run.status} />
                    </td>
                    <td>{run.waitingFor ?? "—"}</td>
                    <td className="nowrap">{formatTime(run.createdAt)}</td>
                    <td className="nowrap">{formatTime(run.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pagination">
            {filters.cursor && (
              <Link href={runsHref({ ...filters, cursor: undefined })} className="button ghost">
                First page
              </Link>
            )}
            {page.value.nextCursor && (
              <Link href={runsHref(filters, page.value.nextCursor)} className="button" rel="next">
                Next page
              </Link>
            )}
          </nav>
        </>
      )}
    </section>
  );
}
