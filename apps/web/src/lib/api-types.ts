/**
 * Types the console shares with the API: the router type (for typed tRPC clients) and the
 * output shapes derived from it, so pages never restate the API's contract by hand.
 */
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../api/src/router";

export type { AppRouter };
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;

export type Operator = RouterOutputs["auth"]["me"];
export type RunList = RouterOutputs["runs"]["list"];
export type RunSummary = RunList["items"][number];
export type RunDetail = RouterOutputs["runs"]["get"];
/** A run's steps (planned ones not reached yet too) and its event history. */
export type RunTimeline = RouterOutputs["runs"]["timeline"];
export type TimelineStep = RunTimeline["steps"][number];
export type TimelineEvent = RunTimeline["events"][number];
export type PendingApproval = RouterOutputs["approvals"]["pending"][number];
export type Dag = RouterOutputs["receipts"]["dag"];
export type DagNode = Dag["nodes"][number];
export type DagEdge = Dag["edges"][number];
/** One receipt: its signed document and steps, and its unsigned metadata kept apart. */
export type ReceiptDetail = RouterOutputs["receipts"]["get"];
/** One receipt's verification report (`runx.receipt_report.v1`): signer, commitments, checks. */
export type ReceiptReport = RouterOutputs["receipts"]["verify"];
export type ReportCheck = ReceiptReport["checks"][number];
export type SkillItem = RouterOutputs["skills"]["search"][number];
export type SkillDetail = RouterOutputs["skills"]["get"];
export type RunsListInput = RouterInputs["runs"]["list"];
export type DispatchState = RouterOutputs["adapters"]["attempts"];
export type DispatchLogs = RouterOutputs["adapters"]["logs"];

/** Run statuses the list filter offers (the store's RUN_STATUSES). */
export const RUN_STATUSES = [
  "running",
  "sealed",
  "needs_agent",
  "needs_approval",
  "failure",
] as const;

/** Statuses after which a run no longer changes on its own. */
export function isSettled(status: string): boolean {
  return status === "sealed" || status === "failure";
}
