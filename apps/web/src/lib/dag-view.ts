/**
 * The receipt DAG as the console draws it (pure): receipts in execution order (when each
 * was sealed; siblings in their parent's step order), identical continuation receipts
 * (the same step paused again, linked by `lineage.previous`) collapsed into one node with
 * a count, and edges oriented the way the run went, so the layout reads top to bottom in
 * execution order: a paused receipt above the continuation that resumed it, a graph
 * receipt above its steps.
 */
import type { DagEdge, DagNode } from "./api-types";
import type { ModelEdge } from "./dag-model";

/** One drawn node: a receipt, or several identical continuation receipts. */
export interface ViewNode {
  /** The earliest member's id (what the node's element and selection use). */
  id: string;
  /** Members in execution order (one unless collapsed). */
  members: DagNode[];
  /** 1-based execution order of the first member. */
  order: number;
  /** The first member (what the node shows). */
  node: DagNode;
}

/** What makes two continuation receipts "identical" on screen. */
function signature(n: DagNode): string {
  return JSON.stringify([
    n.name,
    n.kind,
    n.disposition,
    n.status,
    n.failedCheck,
    n.approvals.map((a) => [a.approver, a.decision]),
  ]);
}

/** Receipts in execution order: sealed earlier first; a parent's steps in lineage order. */
export function executionOrder(nodes: readonly DagNode[], edges: readonly DagEdge[]): DagNode[] {
  const stepIndex = new Map<string, number>();
  edges
    .filter((e) => e.kind === "child")
    .forEach((e, i) => {
      if (!stepIndex.has(e.to)) stepIndex.set(e.to, i);
    });
  return nodes
    .map((n, i) => ({ n, i }))
    .sort((a, b) => {
      const ta = a.n.createdAt ?? "";
      const tb = b.n.createdAt ?? "";
      if (ta !== tb) return ta < tb ? -1 : 1;
      const sa = stepIndex.get(a.n.id) ?? Number.MAX_SAFE_INTEGER;
      const sb = stepIndex.get(b.n.id) ?? Number.MAX_SAFE_INTEGER;
      return sa !== sb ? sa - sb : a.i - b.i;
    })
    .map(({ n }) => n);
}

/** The drawn nodes and the layout's edges (remapped to drawn nodes, in execution direction). */
export function dagView(
  nodes: readonly DagNode[],
  edges: readonly DagEdge[],
): { nodes: ViewNode[]; edges: ModelEdge[]; groupOf: Map<string, string> } {
  const ordered = executionOrder(nodes, edges);
  const order = new Map(ordered.map((n, i) => [n.id, i + 1]));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  // Union-find over `previous` links between identical receipts.
  const parent = new Map<string, string>(nodes.map((n) => [n.id, n.id]));
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    parent.set(id, root);
    return root;
  };
  for (const e of edges) {
    if (e.kind !== "previous") continue;
    const a = byId.get(e.from);
    const b = byId.get(e.to);
    if (!a || !b || signature(a) !== signature(b)) continue;
    const ra = find(a.id);
    const rb = find(b.id);
    if (ra === rb) continue;
    // The earlier receipt represents the group.
    if ((order.get(ra) ?? 0) <= (order.get(rb) ?? 0)) parent.set(rb, ra);
    else parent.set(ra, rb);
  }
  const groups = new Map<string, DagNode[]>();
  for (const n of ordered) {
    const root = find(n.id);
    (groups.get(root) ?? groups.set(root, []).get(root)!).push(n);
  }
  const viewNodes = [...groups.entries()].map(([id, members]) => ({
    id,
    members,
    order: order.get(id) ?? 0,
    node: members[0]!,
  }));
  const groupOf = new Map(nodes.map((n) => [n.id, find(n.id)]));
  const seen = new Set<string>();
  const viewEdges: ModelEdge[] = [];
  for (const e of edges) {
    const from = groupOf.get(e.from);
    const to = groupOf.get(e.to);
    if (from === undefined || to === undefined || from === to) continue;
    // A continuation points at the receipt it resumed; the run went the other way.
    const [a, b] = e.kind === "previous" ? [to, from] : [from, to];
    const key = `${a}\u0000${b}\u0000${e.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    viewEdges.push({ from: a, to: b, kind: e.kind });
  }
  return { nodes: viewNodes, edges: viewEdges, groupOf };
}

/** The seal state in words, for a node's text and label. */
export function dispositionText(disposition: string | null): string {
  if (disposition === null) return "not sealed";
  const words: Record<string, string> = {
    closed: "closed",
    deferred: "deferred (paused)",
    blocked: "blocked",
    failed: "failed",
    declined: "declined",
    killed: "killed",
    timed_out: "timed out",
    superseded: "superseded",
  };
  return words[disposition] ?? disposition;
}

/** A verification mark that is not only a colour. */
export function verificationMark(status: string): string {
  return status === "verified" ? "✓" : status === "unverified" ? "?" : "✗";
}
