import { describe, expect, it } from "vitest";
import { attemptVerification, dispatchKey } from "./dispatch-view";
import type { DispatchState } from "./api-types";

describe("attemptVerification", () => {
  it("words each receipt check as the DAG panel does", () => {
    expect(
      attemptVerification({ verified: true, receipt: { status: "verified", failed_check: null } }),
    ).toEqual({ status: "verified", text: "verified" });
    expect(
      attemptVerification({
        verified: true,
        receipt: { status: "unverified", failed_check: null },
      }),
    ).toEqual({ status: "unverified", text: "unverified" });
    expect(
      attemptVerification({
        verified: false,
        receipt: { status: "invalid", failed_check: "dispatch_document_mismatch" },
      }),
    ).toEqual({ status: "invalid", text: "invalid: dispatch_document_mismatch" });
    expect(
      attemptVerification({
        verified: false,
        receipt: { status: "missing", failed_check: "receipt_missing" },
      }),
    ).toEqual({ status: "invalid", text: "invalid: receipt_missing" });
  });
});

describe("dispatchKey", () => {
  const attempt = (id: string, status: string) =>
    ({ receipt_id: id, dispatch: { status } }) as unknown as DispatchState["attempts"][number];
  it("changes when an attempt launches, settles or is added", () => {
    const idle: DispatchState = { attempts: [], running: [] };
    const launched: DispatchState = {
      attempts: [],
      running: [{ step_id: "dispatch", attempt: 1, started_at: "2026-01-01T00:00:00Z" }],
    };
    const settled: DispatchState = { attempts: [attempt("sha256:a", "cancelled")], running: [] };
    const keys = [null, idle, launched, settled].map(dispatchKey);
    expect(new Set(keys.slice(1)).size).toBe(3);
    expect(dispatchKey(null)).toBe(dispatchKey(idle));
  });
});
