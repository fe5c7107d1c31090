/**
 * Computes the DAG layout in the browser: ELK layered in a Web Worker for graphs up to
 * ELK_MAX_NODES (on the main thread if workers are unavailable), the fast layering above.
 */
import { ELK_MAX_NODES, elkInput, fastLayout, fromElk } from "./dag-model";
import type { Layout, ModelEdge, ModelNode } from "./dag-model";

interface ElkLike {
  layout(graph: unknown): Promise<unknown>;
  terminateWorker?: () => void;
}

async function elkInstance(): Promise<{ elk: ElkLike; offThread: boolean }> {
  try {
    const { default: ELK } = await import("elkjs/lib/elk-api.js");
    const elk = new ELK({
      workerFactory: () =>
        new Worker(new URL("./elk.worker.ts", import.meta.url), { type: "module" }),
    }) as unknown as ElkLike;
    return { elk, offThread: true };
  } catch {
    const { default: ELK } = await import("elkjs/lib/elk.bundled.js");
    return { elk: new ELK() as unknown as ElkLike, offThread: false };
  }
}

export async function computeLayout(
  nodes: readonly ModelNode[],
  edges: readonly ModelEdge[],
): Promise<Layout & { offThread: boolean }> {
  if (nodes.length > ELK_MAX_NODES) return { ...fastLayout(nodes, edges), offThread: false };
  const { elk, offThread } = await elkInstance();
  try {
    const result = await elk.layout(elkInput(nodes, edges));
    return { ...fromElk(result as Parameters<typeof fromElk>[0], nodes, edges), offThread };
  } catch {
    return { ...fastLayout(nodes, edges), offThread: false };
  } finally {
    elk.terminateWorker?.();
  }
}
