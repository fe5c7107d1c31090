/**
 * Operator views over the data store: the configured sources (`runx data sources`) and a
 * bounded tail of one stream (`runx data tail`). Both read bindings exactly like the tools do.
 */
import { RuntimeError } from "../errors.js";
import {
  configuredBindings,
  describeBinding,
  localSourcePath,
  openBinding,
  resolveBinding,
} from "./bindings.js";
import type { BindingEnv } from "./bindings.js";
import { DataStop } from "./model.js";
import type { DataOperationResult } from "./model.js";
import { runDataOperation } from "./operations.js";

/** Largest `--limit` of `runx data tail` (the read_events page cap). */
export const MAX_TAIL = 500;

function asRuntimeError(error: unknown): never {
  if (error instanceof DataStop) throw new RuntimeError("DATA_SOURCE_INVALID", error.message);
  throw error;
}

/** Every configured binding (non-secret view) plus the implicit local:// rule. */
export function listDataSources(ctx: BindingEnv): {
  sources: Record<string, string>[];
  local_default: Record<string, string>;
} {
  let bindings;
  try {
    bindings = configuredBindings(ctx);
  } catch (error) {
    return asRuntimeError(error);
  }
  return {
    sources: [...bindings.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([ref, binding]) => describeBinding(ref, binding)),
    local_default: {
      adapter: "data.sqlite",
      database_path: localSourcePath("local://<ref>").replace(
        /source-[0-9a-f]+/,
        "source-<hex16(ref)>",
      ),
      applies_to: "unbound local://… refs",
    },
  };
}

/** The newest `limit` events of one stream. */
export async function tailStream(
  ctx: BindingEnv & { now(): Date },
  target: { source: string; resource: string; aggregateId: string; limit: number },
): Promise<DataOperationResult> {
  if (!Number.isInteger(target.limit) || target.limit < 1 || target.limit > MAX_TAIL) {
    throw new RuntimeError("USAGE", `--limit must be an integer from 1 to ${MAX_TAIL}`);
  }
  // The operator's own view holds every scope, but not resources the binding leaves out.
  let declared: readonly string[] | undefined;
  const result = await runDataOperation(
    "read_events",
    {
      data_source_ref: target.source,
      resource: target.resource,
      aggregate_id: target.aggregateId,
      limit: target.limit,
    },
    {
      open: (source) => {
        const binding = resolveBinding(source, ctx);
        declared = binding.resources;
        return openBinding(source, binding, ctx);
      },
      now: () => ctx.now(),
      resourcesOf: () => declared,
    },
  );
  const stop = result.stop_conditions[0];
  if (result.status !== "read") {
    throw new RuntimeError(
      stop?.code === "provider_unavailable"
        ? "DATA_STORE_UNAVAILABLE"
        : stop?.code === "needs_source"
          ? "DATA_SOURCE_INVALID"
          : stop?.code === "redaction_required"
            ? "REDACTION_REQUIRED"
            : "INPUT_INVALID",
      `${stop?.code ?? result.status}: ${stop?.message ?? ""}`,
    );
  }
  return result;
}
