"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { KeyboardEvent as ReactKeyboardEvent, PointerEvent as ReactPointerEvent } from "react";
import type { DagEdge, DagNode } from "@/lib/api-types";
import { browserApi, errorMessage } from "@/lib/client-api";
import { centreOn, cull, fitView, neighbour, visibleRect, zoomAt } from "@/lib/dag-model";
import type { Layout, View } from "@/lib/dag-model";
import { dagView, nodeLabel, nodeText } from "@/lib/dag-view";
import { computeLayout } from "@/lib/layout";
import { DagLegend, ReceiptPanel } from "./DagReceiptPanel";
import type { Loaded } from "./DagReceiptPanel";

/**
 * The run's receipt DAG: receipts in execution order, identical continuation receipts
 * collapsed into one node with a count (lib/dag-view.ts); ELK layout (worker), SVG
 * pan/zoom, culling, keyboard selection. A node's seal state and verification each have
 * their own style and are also spelled out in its text and label.
 */
export function DagView({
  nodes,
  edges,
  rootId,
}: {
  nodes: DagNode[];
  edges: DagEdge[];
  rootId: string;
}) {
  const svgRef = useRef<SVGSVGElement | null>(null);
  const [layout, setLayout] = useState<(Layout & { offThread: boolean }) | null>(null);
  const [layoutError, setLayoutError] = useState<string | null>(null);
  const [size, setSize] = useState({ w: 800, h: 560 });
  const [view, setView] = useState<View>({ scale: 1, tx: 0, ty: 0 });
  const [selected, setSelected] = useState<string | null>(null);
  const [focusId, setFocusId] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [dragging, setDragging] = useState(false);
  const drag = useRef<{
    x: number;
    y: number;
    tx: number;
    ty: number;
    id: number;
    moved: boolean;
  } | null>(null);
  const view0 = useMemo(() => dagView(nodes, edges), [nodes, edges]);
  const byId = useMemo(() => new Map(view0.nodes.map((n) => [n.id, n])), [view0]);
  // `<graph>_` of the run's top receipt (`<graph>_graph`), stripped from its steps' names.
  const stepPrefix = useMemo(() => {
    const m = /^(.+_)graph$/.exec(nodes.find((n) => n.id === rootId)?.name ?? "");
    return m?.[1] ?? "";
  }, [nodes, rootId]);
  // Drawn edges whose parent did not commit the exact body of the receipt it points at.
  const mismatched = useMemo(() => {
    const keys = new Set<string>();
    for (const e of edges) {
      if (e.digestMatches !== false) continue;
      const a = view0.groupOf.get(e.from);
      const b = view0.groupOf.get(e.to);
      if (a && b) keys.add(e.kind === "previous" ? `${b}\u0000${a}` : `${a}\u0000${b}`);
    }
    return keys;
  }, [edges, view0]);

  // Layout (off the main thread when possible), nodes in execution order.
  useEffect(() => {
    let cancelled = false;
    computeLayout(
      view0.nodes.map((v) => ({ id: v.id, name: v.node.name, status: v.node.status })),
      view0.edges,
    )
      .then((l) => {
        if (!cancelled) setLayout(l);
      })
      .catch((e: unknown) => {
        if (!cancelled) setLayoutError(errorMessage(e));
      });
    return () => {
      cancelled = true;
    };
  }, [view0]);

  // Track the canvas size.
  useEffect(() => {
    const svg = svgRef.current;
    if (!svg) return;
    const ro = new ResizeObserver(([entry]) => {
      if (entry) setSize({ w: entry.contentRect.width, h: entry.contentRect.height });
    });
    ro.observe(svg);
    return () => ro.disconnect();
  }, []);

  const fit = useCallback(() => {
    if (layout) setView(fitView(layout, size.w, size.h));
  }, [layout, size]);

  // First view: fit when that stays readable, else start at the root at 100 %.
  const initialised = useRef(false);
  useEffect(() => {
    if (!layout || initialised.current || size.w < 10) return;
    initialised.current = true;
    const fitted = fitView(layout, size.w, size.h);
    const root = layout.nodes.find((n) => n.id === rootId) ?? layout.nodes[0];
    if (fitted.scale >= 0.45 || !root) setView(fitted);
    else
      setView({ ...centreOn({ scale: 1, tx: 0, ty: 0 }, root, size.w, size.h), ty: 24 - root.y });
  }, [layout, size, rootId]);

  // Wheel zoom (non-passive so the page does not scroll).
  useEffect(() => {
    const svg = svgRef.current;
    if (!svg) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      setView((v) =>
        zoomAt(v, Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top),
      );
    };
    svg.addEventListener("wheel", onWheel, { passive: false });
    return () => svg.removeEventListener("wheel", onWheel);
  }, []);

  // Load the selected receipt for the panel.
  useEffect(() => {
    if (selected === null) return;
    let cancelled = false;
    browserApi()
      .receipts.get.query({ receiptId: selected })
      .then((d) => {
        if (!cancelled)
          setLoaded({
            id: selected,
            receipt: d.receipt,
            status: d.verification?.status ?? null,
            detail: d,
          });
      })
      .catch((e: unknown) => {
        if (!cancelled) setLoaded({ id: selected, error: errorMessage(e) });
      });
    return () => {
      cancelled = true;
    };
  }, [selected]);

  // Focus a node once it is rendered (after keyboard navigation pans to it).
  useEffect(() => {
    if (focusId === null) return;
    const el = svgRef.current?.querySelector<SVGGElement>(
      `[data-receipt-id="${CSS.escape(focusId)}"]`,
    );
    if (el) {
      el.focus();
      setFocusId(null);
    }
  });

  const onPointerDown = (e: ReactPointerEvent<SVGSVGElement>) => {
    if (e.button !== 0) return;
    drag.current = {
      x: e.clientX,
      y: e.clientY,
      tx: view.tx,
      ty: view.ty,
      id: e.pointerId,
      moved: false,
    };
  };
  const onPointerMove = (e: ReactPointerEvent<SVGSVGElement>) => {
    const d = drag.current;
    if (!d || d.id !== e.pointerId) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 4) return;
    if (!d.moved) {
      d.moved = true;
      setDragging(true);
      e.currentTarget.setPointerCapture(e.pointerId);
    }
    setView((v) => ({ ...v, tx: d.tx + dx, ty: d.ty + dy }));
  };
  const endDrag = (e: ReactPointerEvent<SVGSVGElement>) => {
    if (drag.current?.moved) e.currentTarget.releasePointerCapture(e.pointerId);
    drag.current = null;
    setDragging(false);
  };

  const zoomBy = (factor: number) => setView((v) => zoomAt(v, factor, size.w / 2, size.h / 2));

  const onNodeKey = (e: ReactKeyboardEvent<SVGGElement>, id: string) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      setSelected(id);
      return;
    }
    const dir = (
      { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" } as const
    )[e.key as "ArrowUp"];
    if (!dir || !layout) return;
    e.preventDefault();
    const next = neighbour(layout, id, dir);
    const box = next ? layout.nodes.find((n) => n.id === next) : undefined;
    if (next && box) {
      setView((v) => {
        const r = visibleRect(v, size.w, size.h, -20);
        const inside =
          box.x >= r.x && box.y >= r.y && box.x + box.w <= r.x + r.w && box.y + box.h <= r.y + r.h;
        return inside ? v : centreOn(v, box, size.w, size.h);
      });
      setFocusId(next);
    }
  };

  const visible = layout
    ? cull(layout, visibleRect(view, size.w, size.h))
    : { nodes: [], edges: [] };
  const detailed = view.scale >= 0.4;
  const selectedNode = selected ? byId.get(selected) : undefined;

  return (
    <div className="dag-layout">
      <div>
        <div className="dag-toolbar" role="toolbar" aria-label="Graph view">
          <button type="button" className="button" onClick={() => zoomBy(1.25)}>
            Zoom in
          </button>
          <button type="button" className="button" onClick={() => zoomBy(0.8)}>
            Zoom out
          </button>
          <button type="button" className="button" onClick={fit}>
            Fit
          </button>
          <span className="muted">
            {nodes.length} receipt{nodes.length === 1 ? "" : "s"}
            {view0.nodes.length < nodes.length && ` in ${view0.nodes.length} nodes`} ·{" "}
            {Math.round(view.scale * 100)} %
            {layout &&
              ` · ${layout.engine === "elk" ? "ELK layered" : "fast layered"}${layout.offThread ? " (worker)" : ""}`}
            {layout &&
              visible.nodes.length < nodes.length &&
              ` · ${visible.nodes.length} on screen`}
          </span>
        </div>
        <DagLegend />
        {layoutError && (
          <p role="alert" className="error">
            Layout failed: {layoutError}
          </p>
        )}
        <svg
          ref={svgRef}
          className={`dag-canvas${dragging ? " dragging" : ""}`}
          role="group"
          aria-label="Receipt graph: drag to pan, wheel to zoom, Tab to a node, arrows to move, Enter to open"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={endDrag}
          onPointerCancel={endDrag}
        >
          <defs>
            <marker
              id="dag-arrow"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M0,0 L10,5 L0,10 z" className="dag-arrow" />
            </marker>
          </defs>
          {!layout && !layoutError && (
            <text x={16} y={28} className="muted" fill="currentColor">
              Laying out {view0.nodes.length} nodes…
            </text>
          )}
          <g transform={`translate(${view.tx} ${view.ty}) scale(${view.scale})`}>
            {visible.edges.map((e, i) => {
              const mismatch = mismatched.has(`${e.from}\u0000${e.to}`);
              return (
                <polyline
                  key={`${e.from}-${e.to}-${i}`}
                  points={e.points.map((p) => p.join(",")).join(" ")}
                  className={`dag-edge ${e.kind}${mismatch ? " mismatch" : ""}`}
                  markerEnd="url(#dag-arrow)"
                />
              );
            })}
            {visible.nodes.map((p) => {
              const v = byId.get(p.id);
              if (!v) return null;
              const n = v.node;
              const count = v.members.length;
              const text = nodeText(v, stepPrefix);
              const label = nodeLabel(v, text);
              return (
                <g
                  key={p.id}
                  className={`dag-node ${n.status} disp-${n.disposition ?? "none"}${selected === p.id ? " selected" : ""}`}
                  transform={`translate(${p.x} ${p.y})`}
                  role="button"
                  tabIndex={0}
                  aria-label={label}
                  aria-pressed={selected === p.id}
                  data-testid="dag-node"
                  data-receipt-id={p.id}
                  data-receipt-count={count}
                  data-disposition={n.disposition ?? ""}
                  data-verification={n.status}
                  onClick={() => {
                    if (!drag.current?.moved) setSelected(p.id);
                  }}
                  onKeyDown={(e) => onNodeKey(e, p.id)}
                >
                  <title>{label}</title>
                  <rect width={p.w} height={p.h} rx={6} />
                  <rect className="disp-bar" width={6} height={p.h} rx={3} />
                  {detailed && (
                    <>
                      <text x={14} y={21}>
                        {text.title}
                      </text>
                      {text.count && (
                        <text x={p.w - 10} y={21} className="count" textAnchor="end">
                          {text.count}
                        </text>
                      )}
                      <text x={14} y={40} className="sub">
                        {text.sub}
                      </text>
                    </>
                  )}
                </g>
              );
            })}
          </g>
        </svg>
      </div>
      <aside
        className="card receipt-panel"
        data-testid="receipt-panel"
        aria-live="polite"
        aria-label="Receipt"
      >
        {!selectedNode ? (
          <p className="muted">
            Select a node (click, or Tab to it and press Enter) to see its receipt.
          </p>
        ) : (
          <ReceiptPanel
            group={selectedNode}
            node={selectedNode.node}
            loaded={loaded?.id === selectedNode.id ? loaded : null}
          />
        )}
      </aside>
    </div>
  );
}
