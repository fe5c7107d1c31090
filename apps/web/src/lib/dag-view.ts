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
import { verificationText } from "./receipt-view";

/** One drawn node: a receipt, or several identical continuation receipts. */
export interface ViewNode {
  /** The earliest member's id (what the node's element and selection use). */
  id: string;
  /** Members in execution order (one unless collapsed). */
  members: DagNode[];
  /** 1-based execution order of the first member. */
  order: number;
  /** Execution order of every member. */
  orders: number[];
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

/**
 * Receipts in execution order, read from the links (receipt times have one-second
 * precision, so a pause and its resume often tie): a paused receipt before the
 * continuation that resumed it, a graph's steps in lineage order before the graph receipt
 * that seals them, a step's own children before the step. Receipts the links do not order
 * follow by creation time.
 */
export function executionOrder(nodes: readonly DagNode[], edges: readonly DagEdge[]): DagNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const children = new Map<string, string[]>();
  const previousOf = new Map<string, string>();
  const linked = new Set<string>();
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to)) continue;
    linked.add(e.to);
    if (e.kind === "previous") previousOf.set(e.from, e.to);
    else (children.get(e.from) ?? children.set(e.from, []).get(e.from)!).push(e.to);
  }
  const byTime = [...nodes].sort((a, b) =>
    (a.createdAt ?? "") < (b.createdAt ?? "")
      ? -1
      : (a.createdAt ?? "") > (b.createdAt ?? "")
        ? 1
        : 0,
  );
  const out: DagNode[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (id: string): void => {
    if (done.has(id) || visiting.has(id)) return;
    visiting.add(id);
    for (const child of children.get(id) ?? []) visit(child);
    visiting.delete(id);
    done.add(id);
    out.push(byId.get(id)!);
  };
  const tops = byTime.filter((n) => !linked.has(n.id));
  for (const top of [...tops, ...byTime]) {
    // The continuation chain, oldest pause first.
    const chain: string[] = [];
    for (let id: string | undefined = top.id; id !== undefined && !chain.includes(id);) {
      chain.push(id);
      id = previousOf.get(id);
    }
    for (const id of chain.reverse()) visit(id);
  }
  return out;
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
    orders: members.map((m) => order.get(m.id) ?? 0),
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

/** What a node shows: its order and name, the collapsed count, verification and seal state. */
export function nodeText(
  v: ViewNode,
  prefix: string,
): { title: string; count: string; sub: string } {
  const n = v.node;
  // Steps of the run's graph are named by their step (`<graph>_<step>` → `<step>`).
  const short = prefix !== "" && n.name.startsWith(prefix) ? n.name.slice(prefix.length) : n.name;
  const name = `${v.orders.join(", ")}. ${short}`;
  return {
    title: name.length > 24 ? `${name.slice(0, 23)}…` : name,
    count: v.members.length > 1 ? `×${v.members.length}` : "",
    sub: `${verificationMark(n.status)} ${n.status} · ${dispositionText(n.disposition)}${n.approvals.length > 0 ? " · human" : ""}`,
  };
}

/**
 * A node's accessible name: the text it shows first (so the visible words are part of the
 * name), then the full name, order, kind, failed check and approvals.
 */
export function nodeLabel(v: ViewNode, text: ReturnType<typeof nodeText>): string {
  const n = v.node;
  const count = v.members.length;
  const which =
    count > 1
      ? `${count} identical continuation receipts, numbers ${v.orders.join(", ")}`
      : `number ${v.order} in execution order`;
  const approvals =
    n.approvals.length > 0
      ? `, ${n.approvals.map((a) => `${a.decision} by ${a.approver}`).join("; ")}`
      : "";
  const shown = [text.title, text.count, text.sub].filter((t) => t !== "").join(" ");
  return `${shown} — ${n.name}, ${which}, ${n.kind}, ${verificationText(n.status, n.failedCheck)}${approvals}`;
}
