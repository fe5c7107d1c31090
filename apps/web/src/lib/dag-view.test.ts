import { describe, expect, it } from "vitest";
import type { DagEdge, DagNode } from "./api-types";
import { dagView, executionOrder } from "./dag-view";

function node(id: string, over: Partial<DagNode> = {}): DagNode {
  return {
    id,
    name: id,
    kind: "skill",
    disposition: "closed",
    createdAt: "2026-01-01T00:00:00.000Z",
    issuer: "local:k",
    status: "verified",
    failedCheck: null,
    findings: [],
    approvals: [],
    ...over,
  };
}
const child = (from: string, to: string): DagEdge => ({
  from,
  to,
  kind: "child",
  digestMatches: true,
});
const previous = (from: string, to: string): DagEdge => ({
  from,
  to,
  kind: "previous",
  digestMatches: true,
});

/** A run paused twice at the same step, then sealed: root → p2 → p1, each with steps. */
function twicePaused() {
  const nodes = [
    node("root", { name: "rr_graph", createdAt: "2026-01-01T00:00:05.000Z" }),
    node("record", { name: "rr_record", createdAt: "2026-01-01T00:00:04.000Z" }),
    node("read", { name: "rr_read", createdAt: "2026-01-01T00:00:01.000Z" }),
    node("p2", {
      name: "rr_default",
      disposition: "deferred",
      createdAt: "2026-01-01T00:00:03.000Z",
    }),
    node("p1", {
      name: "rr_default",
      disposition: "deferred",
      createdAt: "2026-01-01T00:00:02.000Z",
    }),
  ];
  const edges = [
    child("root", "read"),
    child("root", "record"),
    previous("root", "p2"),
    child("p2", "read"),
    previous("p2", "p1"),
    child("p1", "read"),
  ];
  return { nodes, edges };
}

describe("dagView", () => {
  it("collapses identical continuation receipts into one node with a count", () => {
    const { nodes, edges } = twicePaused();
    const view = dagView(nodes, edges);
    expect(view.nodes.map((v) => [v.id, v.members.map((m) => m.id)])).toEqual([
      ["read", ["read"]],
      ["p1", ["p1", "p2"]],
      ["record", ["record"]],
      ["root", ["root"]],
    ]);
    expect(view.nodes.find((v) => v.id === "p1")!.orders).toEqual([2, 3]);
    // Edges run the way the run went: the paused receipts before the seal that resumed them.
    expect(view.edges).toContainEqual({ from: "p1", to: "root", kind: "previous" });
    expect(view.edges).toContainEqual({ from: "p1", to: "read", kind: "child" });
    expect(view.edges.filter((e) => e.from === e.to)).toEqual([]);
    expect(view.edges.filter((e) => e.from === "p1" && e.to === "read")).toHaveLength(1);
  });

  it("keeps continuation receipts apart when their state, verification or approvals differ", () => {
    const { nodes, edges } = twicePaused();
    const differs: Array<Partial<DagNode>> = [
      { status: "invalid", failedCheck: "signature_invalid" },
      { disposition: "blocked" },
      { approvals: [{ approver: "alice", decision: "approve", at: null }] },
    ];
    for (const change of differs) {
      const changed = nodes.map((n) => (n.id === "p2" ? { ...n, ...change } : n));
      expect(dagView(changed, edges).nodes).toHaveLength(5);
    }
  });

  it("orders a pause before its resume and steps before their graph, even in the same second", () => {
    const { nodes, edges } = twicePaused();
    const sameSecond = nodes.map((n) => ({ ...n, createdAt: "2026-01-01T00:00:00Z" }));
    expect(executionOrder(sameSecond, edges).map((n) => n.id)).toEqual([
      "read",
      "p1",
      "p2",
      "record",
      "root",
    ]);
  });
});
