/**
 * The receipt DAG's view model (pure): positions for every node and edge, computed by ELK
 * (layered) for ordinary graphs and by a linear-time longest-path layering for very large
 * ones; plus viewport culling, so only what is on screen is rendered.
 */
export interface ModelNode {
  id: string;
  name: string;
  status: string;
}
export interface ModelEdge {
  from: string;
  to: string;
  kind: string;
}

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface PlacedNode extends Box {
  id: string;
}
export interface PlacedEdge {
  from: string;
  to: string;
  kind: string;
  points: Array<[number, number]>;
  /** Bounding box of the polyline (for culling). */
  box: Box;
}
export interface Layout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
  engine: "elk" | "fast";
}

export const NODE_W = 220;
export const NODE_H = 54;
const GAP_X = 40;
const GAP_Y = 70;
const PAD = 24;

/** Above this many nodes the fast layering is used (ELK layered grows superlinearly). */
export const ELK_MAX_NODES = 1500;

function boxOf(points: Array<[number, number]>): Box {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const [x, y] of points) {
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
  }
  return { x: minX, y: minY, w: maxX - minX, h: maxY - minY };
}

/** Edges whose endpoints both exist (dangling references are dropped), de-duplicated. */
export function usableEdges(nodes: readonly ModelNode[], edges: readonly ModelEdge[]): ModelEdge[] {
  const ids = new Set(nodes.map((n) => n.id));
  const seen = new Set<string>();
  return edges.filter((e) => {
    const key = `${e.from}\u0000${e.to}\u0000${e.kind}`;
    if (!ids.has(e.from) || !ids.has(e.to) || e.from === e.to || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Longest-path layering (Kahn order; cycle members fall back to layer 0), nodes ordered in
 * a layer by the mean position of their parents: O(V + E), fine for tens of thousands.
 */
export function fastLayout(nodes: readonly ModelNode[], edges: readonly ModelEdge[]): Layout {
  const list = usableEdges(nodes, edges);
  const indeg = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  const out = new Map<string, string[]>();
  const parents = new Map<string, string[]>();
  for (const e of list) {
    indeg.set(e.to, (indeg.get(e.to) ?? 0) + 1);
    (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(e.to);
    (parents.get(e.to) ?? parents.set(e.to, []).get(e.to)!).push(e.from);
  }
  const layer = new Map<string, number>();
  const queue = nodes.filter((n) => (indeg.get(n.id) ?? 0) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const child of out.get(id) ?? []) {
      layer.set(child, Math.max(layer.get(child) ?? 0, (layer.get(id) ?? 0) + 1));
      const left = (indeg.get(child) ?? 0) - 1;
      indeg.set(child, left);
      if (left === 0) queue.push(child);
    }
  }
  const layers: string[][] = [];
  for (const n of nodes) {
    const l = layer.get(n.id) ?? 0;
    (layers[l] ??= []).push(n.id);
  }
  const order = new Map<string, number>();
  const placed = new Map<string, PlacedNode>();
  let width = 0;
  layers.forEach((ids, l) => {
    if (l > 0) {
      const score = (id: string) => {
        const ps = parents.get(id) ?? [];
        return ps.length === 0
          ? Infinity
          : ps.reduce((s, p) => s + (order.get(p) ?? 0), 0) / ps.length;
      };
      ids.sort((a, b) => score(a) - score(b));
    }
    ids.forEach((id, i) => {
      order.set(id, i);
      placed.set(id, {
        id,
        x: PAD + i * (NODE_W + GAP_X),
        y: PAD + l * (NODE_H + GAP_Y),
        w: NODE_W,
        h: NODE_H,
      });
    });
    width = Math.max(width, PAD * 2 + ids.length * (NODE_W + GAP_X) - GAP_X);
  });
  const placedEdges = list.map((e): PlacedEdge => {
    const a = placed.get(e.from)!;
    const b = placed.get(e.to)!;
    const points: Array<[number, number]> = [
      [a.x + a.w / 2, a.y + a.h],
      [b.x + b.w / 2, b.y],
    ];
    return { from: e.from, to: e.to, kind: e.kind, points, box: boxOf(points) };
  });
  return {
    nodes: nodes.map((n) => placed.get(n.id)!),
    edges: placedEdges,
    width,
    height: PAD * 2 + layers.length * (NODE_H + GAP_Y) - GAP_Y,
    engine: "fast",
  };
}

/** ELK's input graph (layered, top-down). */
export interface ElkInput {
  id: string;
  layoutOptions: Record<string, string>;
  children: Array<{ id: string; width: number; height: number }>;
  edges: Array<{ id: string; sources: string[]; targets: string[] }>;
}

export function elkInput(nodes: readonly ModelNode[], edges: readonly ModelEdge[]): ElkInput {
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.edgeRouting": "POLYLINE",
      "elk.spacing.nodeNode": String(GAP_X),
      "elk.layered.spacing.nodeNodeBetweenLayers": String(GAP_Y),
      "elk.padding": `[top=${PAD},left=${PAD},bottom=${PAD},right=${PAD}]`,
      // Nodes arrive in execution order: keep it within each layer (siblings in step order).
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children: nodes.map((n) => ({ id: n.id, width: NODE_W, height: NODE_H })),
    edges: usableEdges(nodes, edges).map((e, i) => ({
      id: `e${i}`,
      sources: [e.from],
      targets: [e.to],
    })),
  };
}

interface ElkOutput {
  width?: number;
  height?: number;
  children?: Array<{ id: string; x?: number; y?: number; width?: number; height?: number }>;
  edges?: Array<{
    id: string;
    sources: string[];
    targets: string[];
    sections?: Array<{
      startPoint: { x: number; y: number };
      endPoint: { x: number; y: number };
      bendPoints?: Array<{ x: number; y: number }>;
    }>;
  }>;
}

/** ELK's result → Layout (edge kinds carried over from the input order). */
export function fromElk(
  result: ElkOutput,
  nodes: readonly ModelNode[],
  edges: readonly ModelEdge[],
): Layout {
  const list = usableEdges(nodes, edges);
  const byId = new Map(
    (result.children ?? []).map((c) => [
      c.id,
      { id: c.id, x: c.x ?? 0, y: c.y ?? 0, w: c.width ?? NODE_W, h: c.height ?? NODE_H },
    ]),
  );
  const placedEdges = (result.edges ?? []).flatMap((e): PlacedEdge[] => {
    const index = Number(e.id.slice(1));
    const source = list[index];
    const from = e.sources[0];
    const to = e.targets[0];
    if (from === undefined || to === undefined) return [];
    const points: Array<[number, number]> = [];
    for (const s of e.sections ?? []) {
      points.push([s.startPoint.x, s.startPoint.y]);
      for (const b of s.bendPoints ?? []) points.push([b.x, b.y]);
      points.push([s.endPoint.x, s.endPoint.y]);
    }
    if (points.length === 0) {
      const a = byId.get(from);
      const b = byId.get(to);
      if (!a || !b) return [];
      points.push([a.x + a.w / 2, a.y + a.h], [b.x + b.w / 2, b.y]);
    }
    return [{ from, to, kind: source?.kind ?? "child", points, box: boxOf(points) }];
  });
  return {
    nodes: nodes.map((n) => byId.get(n.id) ?? { id: n.id, x: 0, y: 0, w: NODE_W, h: NODE_H }),
    edges: placedEdges,
    width: result.width ?? 0,
    height: result.height ?? 0,
    engine: "elk",
  };
}

/** Pan/zoom state: screen = graph * scale + (tx, ty). */
export interface View {
  scale: number;
  tx: number;
  ty: number;
}

/** The graph-space rectangle visible in a `w`×`h` viewport, grown by `margin` screen px. */
export function visibleRect(view: View, w: number, h: number, margin = 100): Box {
  return {
    x: (-view.tx - margin) / view.scale,
    y: (-view.ty - margin) / view.scale,
    w: (w + 2 * margin) / view.scale,
    h: (h + 2 * margin) / view.scale,
  };
}

export function intersects(a: Box, b: Box): boolean {
  return a.x <= b.x + b.w && b.x <= a.x + a.w && a.y <= b.y + b.h && b.y <= a.y + a.h;
}

/** Only the nodes and edges inside `rect` (viewport culling). */
export function cull(layout: Layout, rect: Box): { nodes: PlacedNode[]; edges: PlacedEdge[] } {
  return {
    nodes: layout.nodes.filter((n) => intersects(n, rect)),
    edges: layout.edges.filter((e) => intersects(e.box, rect)),
  };
}

/** The view that fits the whole layout into `w`×`h` (never zooming in past 1.5). */
export function fitView(layout: Layout, w: number, h: number): View {
  const scale = Math.min(1.5, w / Math.max(layout.width, 1), h / Math.max(layout.height, 1));
  return {
    scale,
    tx: (w - layout.width * scale) / 2,
    ty: Math.max(0, (h - layout.height * scale) / 2),
  };
}

/** Zooms by `factor` around the screen point (cx, cy), clamped to [0.05, 4]. */
export function zoomAt(view: View, factor: number, cx: number, cy: number): View {
  const scale = Math.min(4, Math.max(0.05, view.scale * factor));
  const k = scale / view.scale;
  return { scale, tx: cx - (cx - view.tx) * k, ty: cy - (cy - view.ty) * k };
}

/** The view that centres node `n` in a `w`×`h` viewport at the current scale. */
export function centreOn(view: View, n: Box, w: number, h: number): View {
  return {
    scale: view.scale,
    tx: w / 2 - (n.x + n.w / 2) * view.scale,
    ty: h / 2 - (n.y + n.h / 2) * view.scale,
  };
}

/** A node's neighbour in a direction, for arrow-key navigation. */
export function neighbour(
  layout: Layout,
  id: string,
  dir: "up" | "down" | "left" | "right",
): string | null {
  const here = layout.nodes.find((n) => n.id === id);
  if (!here) return null;
  const cx = here.x + here.w / 2;
  const cy = here.y + here.h / 2;
  let best: { id: string; d: number } | null = null;
  for (const n of layout.nodes) {
    if (n.id === id) continue;
    const dx = n.x + n.w / 2 - cx;
    const dy = n.y + n.h / 2 - cy;
    const ok =
      dir === "down"
        ? dy > 1
        : dir === "up"
          ? dy < -1
          : dir === "right"
            ? dx > 1 && Math.abs(dy) < 1
            : dx < -1 && Math.abs(dy) < 1;
    if (!ok) continue;
    const d = dir === "up" || dir === "down" ? Math.abs(dy) * 4 + Math.abs(dx) : Math.abs(dx);
    if (best === null || d < best.d) best = { id: n.id, d };
  }
  return best?.id ?? null;
}
