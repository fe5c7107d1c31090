"use client";

import { useEffect, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import { browserApi } from "@/lib/client-api";
import { isSettled } from "@/lib/api-types";
import { dispatchKey } from "@/lib/dispatch-view";

/**
 * The run's status, live: an SSE subscription to run events plus a 1 s poll (the fallback
 * when the stream drops). A change re-renders the server page (steps, outputs, requests), and
 * the status shown here is the one that page rendered, so status and output always change
 * together (never "sealed" next to a stale, empty output). With `dispatch` (the page's
 * dispatch-attempts key) the poll also watches the run's adapter dispatches, which launch and
 * settle without a run status change of their own.
 */
export function RunLive({
  runId,
  status: initial,
  dispatch,
}: {
  runId: string;
  status: string;
  dispatch?: string;
}) {
  const router = useRouter();
  const [live, setLive] = useState<"connecting" | "live" | "polling" | "idle">("connecting");
  const rendered = useRef(initial);
  const status = initial;
  const lastDispatch = useRef(dispatch);
  useEffect(() => {
    lastDispatch.current = dispatch;
  }, [dispatch]);

  useEffect(() => {
    rendered.current = initial;
  }, [initial]);

  useEffect(() => {
    if (isSettled(initial)) {
      setLive("idle");
      return;
    }
    const api = browserApi();
    // Until the refreshed page shows the new status, every event or poll asks again.
    const seen = (next: string) => {
      if (next !== rendered.current) router.refresh();
    };
    const sub = api.runs.onStatus.subscribe(undefined, {
      onStarted: () => setLive("live"),
      onData: (event) => {
        if (event.runId === runId) seen(event.status);
      },
      onError: () => setLive("polling"),
    });
    let stopped = false;
    const timer = window.setInterval(() => {
      if (document.visibilityState === "hidden") return;
      api.runs.get
        .query({ runId })
        .then((detail) => {
          if (!stopped) seen(detail.run.status);
        })
        .catch(() => undefined);
      if (lastDispatch.current === undefined) return;
      api.adapters.attempts
        .query({ runId })
        .then((state) => {
          const key = dispatchKey(state);
          if (stopped || key === lastDispatch.current) return;
          lastDispatch.current = key;
          router.refresh();
        })
        .catch(() => undefined);
    }, 1000);
    return () => {
      stopped = true;
      sub.unsubscribe();
      window.clearInterval(timer);
    };
  }, [initial, runId, router]);

  return (
    <span className="run-live">
      {/* The record's status, uncoloured: the outcome badge beside it says what it means. */}
      <span className="badge" data-testid="run-status" title="record status" aria-live="polite">
        {status}
      </span>
      {!isSettled(status) && (
        <span className="live-dot" title={`updates: ${live}`}>
          {live === "live" ? "live" : live === "polling" ? "polling" : "…"}
        </span>
      )}
    </span>
  );
}
