import { describe, expect, it } from "vitest";
import {
  cull,
  elkInput,
  fastLayout,
  fitView,
  fromElk,
  neighbour,
  usableEdges,
  visibleRect,
  zoomAt,
} from "./dag-model";

const n = (id: string) => ({ id, name: id, status: "verified" });

describe("fastLayout", () => {
  it("puts children one layer below their deepest parent", () => {
    const nodes = [n("a"), n("b"), n("c")];
    const layout = fastLayout(nodes, [
      { from: "a", to: "b", kind: "child" },
      { from: "b", to: "c", kind: "child" },
      { from: "a", to: "c", kind: "child" },
    ]);
    const y = Object.fromEntries(layout.nodes.map((p) => [p.id, p.y]));
    expect(y.a).toBeLessThan(y.b!);
    expect(y.b).toBeLessThan(y.c!);
    expect(layout.edges).toHaveLength(3);
  });

  it("survives cycles and dangling edges, and culls a 20,000-node layout to the viewport", () => {
    expect(usableEdges([n("a")], [{ from: "a", to: "zz", kind: "child" }])).toEqual([]);
    const cyc = fastLayout(
      [n("a"), n("b")],
      [
        { from: "a", to: "b", kind: "child" },
        { from: "b", to: "a", kind: "child" },
      ],
    );
    expect(cyc.nodes).toHaveLength(2);
    const big = Array.from({ length: 20_000 }, (_, i) => n(`r${i}`));
    const edges = big
      .slice(1)
      .map((x, i) => ({ from: `r${Math.floor(i / 8)}`, to: x.id, kind: "child" }));
    // Layout time is measured by bench/console-dag.mjs, not asserted here.
    const layout = fastLayout(big, edges);
    expect(layout.nodes).toHaveLength(20_000);
    // Culling keeps a viewport's worth, not the whole graph.
    const shown = cull(layout, visibleRect({ scale: 1, tx: 0, ty: 0 }, 1200, 800));
    expect(shown.nodes.length).toBeGreaterThan(0);
    expect(shown.nodes.length).toBeLessThan(200);
  });
});

describe("ELK mapping", () => {
  it("builds a layered input and reads positions and bend points back", () => {
    const nodes = [n("a"), n("b")];
    const edges = [{ from: "a", to: "b", kind: "previous" }];
    const input = elkInput(nodes, edges);
    expect(input.layoutOptions["elk.algorithm"]).toBe("layered");
    expect(input.edges).toEqual([{ id: "e0", sources: ["a"], targets: ["b"] }]);
    const layout = fromElk(
      {
        width: 300,
        height: 200,
        children: [
          { id: "a", x: 10, y: 10, width: 220, height: 54 },
          { id: "b", x: 10, y: 120, width: 220, height: 54 },
        ],
        edges: [
          {
            id: "e0",
            sources: ["a"],
            targets: ["b"],
            sections: [
              {
                startPoint: { x: 1, y: 2 },
                endPoint: { x: 3, y: 4 },
                bendPoints: [{ x: 5, y: 6 }],
              },
            ],
          },
        ],
      },
      nodes,
      edges,
    );
    expect(layout.nodes.map((p) => p.y)).toEqual([10, 120]);
    expect(layout.edges[0]).toMatchObject({
      kind: "previous",
      points: [
        [1, 2],
        [5, 6],
        [3, 4],
      ],
    });
  });
});

describe("view helpers", () => {
  it("fits, zooms around a point and finds neighbours", () => {
    const layout = fastLayout(
      [n("a"), n("b"), n("c")],
      [
        { from: "a", to: "b", kind: "child" },
        { from: "a", to: "c", kind: "child" },
      ],
    );
    const fit = fitView(layout, 1000, 600);
    expect(fit.scale).toBeGreaterThan(0);
    const z = zoomAt({ scale: 1, tx: 0, ty: 0 }, 2, 100, 100);
    expect(z).toEqual({ scale: 2, tx: -100, ty: -100 });
    expect(neighbour(layout, "a", "down")).toMatch(/^[bc]$/);
    expect(neighbour(layout, "b", "up")).toBe("a");
    expect(neighbour(layout, "a", "up")).toBeNull();
  });
});
