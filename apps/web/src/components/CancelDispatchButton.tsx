"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";

/**
 * "Cancel dispatch" with an inline confirmation: asks the run's dispatch in flight to stop
 * (`adapters.cancel`, CSRF header from the browser client). The attempt then seals
 * `cancelled`, which the page's live refresh picks up.
 */
export function CancelDispatchButton({ runId }: { runId: string }) {
  const router = useRouter();
  const [confirming, setConfirming] = useState(false);
  const hydrated = useHydrated();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [requested, setRequested] = useState(false);

  async function cancel() {
    setBusy(true);
    setError(null);
    try {
      await browserApi().adapters.cancel.mutate({ runId });
      setRequested(true);
      setConfirming(false);
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  if (requested) {
    return (
      <p role="status" className="ok">
        Cancellation requested; the attempt is stopped and sealed as cancelled.
      </p>
    );
  }
  return (
    <div className="stack">
      {!confirming ? (
        <div>
          <button type="button" className="button deny" onClick={() => setConfirming(true)}>
            Cancel dispatch
          </button>
        </div>
      ) : (
        <div role="group" aria-label="Confirm cancellation" className="confirm card">
          <p>
            Stop the running dispatch of <span className="mono">{runId}</span>? The adapter&apos;s
            process group gets SIGTERM, then SIGKILL after its grace period; the attempt is sealed
            as <code>cancelled</code>.
          </p>
          <div className="link-row">
            <button
              type="button"
              className="button deny"
              disabled={busy || !hydrated}
              onClick={() => void cancel()}
            >
              Confirm cancel
            </button>
            <button
              type="button"
              className="button ghost"
              disabled={busy || !hydrated}
              onClick={() => setConfirming(false)}
            >
              Keep running
            </button>
          </div>
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
