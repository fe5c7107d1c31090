"use client";

import { useEffect } from "react";
import { useRouter } from "next/navigation";
import { browserApi } from "@/lib/client-api";

/** Re-renders the page when the API reports run changes (SSE), plus a slow poll fallback. */
export function LiveRefresh({
  source,
  everyMs = 5000,
}: {
  source: "approvals" | "runs";
  everyMs?: number;
}) {
  const router = useRouter();
  useEffect(() => {
    const api = browserApi();
    const opts = { onData: () => router.refresh(), onError: () => undefined };
    const sub =
      source === "approvals"
        ? api.approvals.onNew.subscribe(undefined, opts)
        : api.runs.onStatus.subscribe(undefined, opts);
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") router.refresh();
    }, everyMs);
    return () => {
      sub.unsubscribe();
      window.clearInterval(timer);
    };
  }, [router, source, everyMs]);
  return null;
}
