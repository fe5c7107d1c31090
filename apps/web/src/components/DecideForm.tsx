"use client";

import { useState } from "react";
import type { FormEvent } from "react";
import { useRouter } from "next/navigation";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";

/** Approve or deny one gate with a reason; the decision is signed into the run's receipts. */
export function DecideForm(props: {
  runId: string;
  gateId: string;
  stale: boolean;
  required: number;
}) {
  const router = useRouter();
  const [reason, setReason] = useState("");
  const hydrated = useHydrated();
  const [error, setError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `reason-${props.runId}-${props.gateId}`.replace(/[^A-Za-z0-9_-]/g, "_");

  async function decide(decision: "approve" | "deny", event?: FormEvent) {
    event?.preventDefault();
    if (reason.trim() === "") {
      setError("Give a reason: it is signed into the receipt with your name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await browserApi().approvals.decide.mutate({
        runId: props.runId,
        gateId: props.gateId,
        decision,
        reason: reason.trim(),
      });
      setOutcome(
        decision === "deny"
          ? "decided: denied; the run resumes and closes the gate."
          : result.releasable
            ? `decided: approved (${result.approvals}/${result.required}); the run resumes.`
            : `approval recorded (${result.approvals}/${result.required}); waiting for more approvers.`,
      );
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  }

  if (outcome !== null) {
    return (
      <p role="status" className="ok">
        {outcome}
      </p>
    );
  }
  return (
    <form method="post" className="decide" onSubmit={(e) => void decide("approve", e)}>
      <fieldset className="bare" disabled={!hydrated}>
        <label htmlFor={id}>Reason</label>
        <textarea
          id={id}
          rows={2}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          placeholder="Why you approve or deny (recorded with your name)"
        />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <div className="buttons">
          <button
            type="submit"
            className="button approve"
            disabled={busy || props.stale}
            title={
              props.stale ? "stale: the package or closure changed since the pause" : undefined
            }
          >
            Approve
          </button>
          <button
            type="button"
            className="button deny"
            disabled={busy}
            onClick={() => void decide("deny")}
          >
            Deny
          </button>
        </div>
      </fieldset>
    </form>
  );
}
