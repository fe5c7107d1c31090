"use client";

import { useEffect, useRef, useState } from "react";
import type { KeyboardEvent, Ref } from "react";
import { useRouter } from "next/navigation";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import { useRecordDecision } from "./DecisionLog";

type Decision = "approve" | "deny";

/**
 * Approve or deny one gate with a reason, after a confirmation that names the effect; the
 * decision is signed into the run's receipts. Approving is off (and refused by the API) when
 * `approveBlocked` says why: a stale gate, or an effect the runtime could not show.
 */
export function DecideForm(props: {
  runId: string;
  gateId: string;
  /** What the gate releases, in a few words ("payout.create of $12.50 to payouts"). */
  headline: string;
  /** Why approving is not possible, or null. */
  approveBlocked: string | null;
}) {
  const router = useRouter();
  const record = useRecordDecision();
  const hydrated = useHydrated();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<Decision | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const panel = useRef<HTMLDivElement>(null);
  const buttons = {
    approve: useRef<HTMLButtonElement>(null),
    deny: useRef<HTMLButtonElement>(null),
  };
  // The button a cancelled confirmation gives the focus back to.
  const [returnTo, setReturnTo] = useState<Decision | null>(null);
  const id = `decide-${props.runId}-${props.gateId}`.replace(/[^A-Za-z0-9_-]/g, "_");

  useEffect(() => {
    if (confirming !== null) panel.current?.focus();
    else if (returnTo !== null) buttons[returnTo].current?.focus();
    // The refs are stable: only a change of step moves the focus.
  }, [confirming, returnTo]);

  function ask(decision: Decision) {
    if (reason.trim() === "") {
      setError("Give a reason: it is signed into the receipt with your name.");
      return;
    }
    if (decision === "approve" && props.approveBlocked !== null) return;
    setError(null);
    setReturnTo(null);
    setConfirming(decision);
  }

  function cancel() {
    setReturnTo(confirming);
    setConfirming(null);
  }

  async function decide(decision: Decision) {
    setBusy(true);
    setError(null);
    try {
      const result = await browserApi().approvals.decide.mutate({
        runId: props.runId,
        gateId: props.gateId,
        decision,
        reason: reason.trim(),
      });
      const run = result.run;
      record({
        key: `${props.runId}/${props.gateId}/${result.decision.id}`,
        runId: props.runId,
        gateId: props.gateId,
        decision,
        headline: props.headline,
        approvals: result.approvals,
        required: result.required,
        releasable: result.releasable,
        run:
          run === null
            ? null
            : run.state === "running"
              ? { state: "running" }
              : {
                  state: "settled",
                  status: run.envelope.status,
                  disposition: run.envelope.closure?.disposition ?? null,
                },
      });
      setDone(true);
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
      setConfirming(null);
      setBusy(false);
    }
  }

  if (done) {
    return (
      <p className="ok" role="status">
        Decision recorded; see “Decided on this page” above.
      </p>
    );
  }
  const blockedId = `${id}-blocked`;
  return (
    <form method="post" className="decide" onSubmit={(e) => e.preventDefault()}>
      <fieldset className="bare" disabled={!hydrated || busy}>
        <label htmlFor={`${id}-reason`}>Reason</label>
        <textarea
          id={`${id}-reason`}
          rows={2}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          placeholder="Why you approve or deny (recorded with your name)"
          readOnly={confirming !== null}
        />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {props.approveBlocked !== null && (
          <p id={blockedId} className="error" data-testid="approve-blocked">
            Approving is not possible: {props.approveBlocked}
          </p>
        )}
        {confirming === null ? (
          <div className="buttons">
            <button
              type="button"
              className="button approve"
              ref={buttons.approve}
              disabled={props.approveBlocked !== null}
              aria-describedby={props.approveBlocked !== null ? blockedId : undefined}
              onClick={() => ask("approve")}
            >
              Approve
            </button>
            <button
              type="button"
              ref={buttons.deny}
              className="button deny"
              onClick={() => ask("deny")}
            >
              Deny
            </button>
          </div>
        ) : (
          <ConfirmPanel
            ref={panel}
            id={`${id}-confirm`}
            decision={confirming}
            headline={props.headline}
            reason={reason.trim()}
            busy={busy}
            onConfirm={() => void decide(confirming)}
            onCancel={cancel}
          />
        )}
      </fieldset>
    </form>
  );
}

/** The confirmation: names the effect and the reason; Escape or Cancel goes back. */
function ConfirmPanel(props: {
  ref: Ref<HTMLDivElement>;
  id: string;
  decision: Decision;
  headline: string;
  reason: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const approve = props.decision === "approve";
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      props.onCancel();
    }
  };
  return (
    <div
      ref={props.ref}
      role="group"
      aria-labelledby={`${props.id}-title`}
      aria-describedby={`${props.id}-text`}
      tabIndex={-1}
      className={`confirm confirm-${props.decision}`}
      onKeyDown={onKeyDown}
      data-testid="confirm-decision"
    >
      <p id={`${props.id}-title`} className="confirm-title">
        {approve ? "Approve" : "Deny"} {props.headline}?
      </p>
      <p id={`${props.id}-text`} className="hint">
        {approve
          ? "This releases the effect above, signed with your name and reason"
          : "This closes the gate, signed with your name and reason"}
        : “{props.reason}”.
      </p>
      <div className="buttons">
        <button
          type="button"
          className={`button ${approve ? "approve" : "deny"}`}
          onClick={props.onConfirm}
          disabled={props.busy}
        >
          {props.busy ? "Recording…" : approve ? "Yes, approve" : "Yes, deny"}
        </button>
        <button type="button" className="button ghost" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
