"use client";

import { createContext, useCallback, useContext, useEffect, useState } from "react";
import type { ReactNode } from "react";
import Link from "next/link";
import { browserApi } from "@/lib/client-api";
import { decisionResult, outcomeWord } from "@/lib/approval-view";
import type { RunAfterDecision } from "@/lib/approval-view";

/** One decision made on this page, and what it did to the run. */
export interface DecisionEntry {
  key: string;
  runId: string;
  gateId: string;
  decision: "approve" | "deny";
  headline: string;
  approvals: number;
  required: number;
  releasable: boolean;
  run: RunAfterDecision | null;
}

const Context = createContext<(entry: DecisionEntry) => void>(() => undefined);

/** How a decision form reports what it did (kept when its card leaves the inbox). */
export function useRecordDecision(): (entry: DecisionEntry) => void {
  return useContext(Context);
}

/**
 * The inbox with a log of the decisions made here: a decided gate leaves the inbox when the
 * page refreshes, so its result, the link to its run and the run's outcome stay in this log
 * (client state survives the server re-render). A run still running is followed until it
 * seals or pauses again.
 */
export function DecisionLog({ children }: { children: ReactNode }) {
  const [entries, setEntries] = useState<DecisionEntry[]>([]);
  const record = useCallback((entry: DecisionEntry) => {
    setEntries((all) => [entry, ...all.filter((e) => e.key !== entry.key)]);
  }, []);
  const update = useCallback((key: string, run: RunAfterDecision) => {
    setEntries((all) => all.map((e) => (e.key === key ? { ...e, run } : e)));
  }, []);
  return (
    <Context.Provider value={record}>
      <div role="status" aria-live="polite" className="decision-log" data-testid="decision-log">
        {entries.length > 0 && (
          <section className="card decided" aria-label="Decided on this page">
            <h2>Decided on this page</h2>
            <ul>
              {entries.map((e) => (
                <DecisionItem key={e.key} entry={e} onSettled={update} />
              ))}
            </ul>
          </section>
        )}
      </div>
      {children}
    </Context.Provider>
  );
}

function DecisionItem({
  entry,
  onSettled,
}: {
  entry: DecisionEntry;
  onSettled: (key: string, run: RunAfterDecision) => void;
}) {
  const running = entry.run?.state === "running";
  useEffect(() => {
    if (!running) return;
    let stop = false;
    const deadline = Date.now() + 120_000;
    const poll = async () => {
      while (!stop && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000));
        try {
          const detail = await browserApi().runs.get.query({ runId: entry.runId });
          if (detail.run.status !== "running") {
            onSettled(entry.key, {
              state: "settled",
              status: detail.run.status,
              disposition: detail.run.disposition,
            });
            return;
          }
        } catch {
          // The API is momentarily unreachable: the next poll tries again.
        }
      }
    };
    void poll();
    return () => {
      stop = true;
    };
  }, [running, entry.key, entry.runId, onSettled]);
  const sealed = entry.run?.state === "settled" && entry.run.status === "sealed";
  return (
    <li className={`decided-item decided-${entry.decision}`} data-testid="decision-result">
      <span className={`badge decision-${entry.decision}`}>
        {entry.decision === "approve" ? "approved" : "denied"}
      </span>{" "}
      <strong>{entry.headline}</strong>: {decisionResult(entry)}{" "}
      {sealed && (
        <span className={`badge outcome-${outcomeWord(entry.run?.disposition).replace(/ /g, "_")}`}>
          {outcomeWord(entry.run?.disposition)}
        </span>
      )}{" "}
      <Link href={`/runs/${encodeURIComponent(entry.runId)}`} className="mono">
        Open run {entry.runId}
      </Link>
    </li>
  );
}
