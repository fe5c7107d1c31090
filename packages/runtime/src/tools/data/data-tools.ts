/**
 * The four native data operations as tools: `data.append_event`, `data.read_events`,
 * `data.read_projection`, `data.list_stream_heads`. The binding is resolved per call from the
 * workspace and the run's environment; the tool returns the `runx.data.operation_result.v1`
 * packet, also wrapped as `data_operation_result.data` for graph steps. `conflict` is a
 * successful invocation; every other stop condition fails the invocation with the envelope
 * as its output, so graphs never treat a refused operation as done. The tools admit their own
 * scopes: a call without `runx:data:read` / `runx:data:append` comes back as a
 * `needs_authority` envelope (failure POLICY_DENIED, so a graph step seals `blocked`) rather
 * than a generic policy denial; `redaction_required` fails with REDACTION_REQUIRED (the step
 * seals `failed`, its receipt listing the withheld paths and no value).
 */
import appendSchema from "../../../schemas/tools/data-append-event.input.schema.json" with { type: "json" };
import headsSchema from "../../../schemas/tools/data-list-stream-heads.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/data-operation-result.output.schema.json" with { type: "json" };
import readSchema from "../../../schemas/tools/data-read-events.input.schema.json" with { type: "json" };
import projectionSchema from "../../../schemas/tools/data-read-projection.input.schema.json" with { type: "json" };
import { openBinding, resolveBinding } from "../../data/bindings.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { DATA_APPEND_SCOPE, DATA_READ_SCOPE } from "../../data/model.js";
import type { DataOperation, DataOperationResult } from "../../data/model.js";
import { runDataOperation } from "../../data/operations.js";
import { validateToolsDataAppendEventInput } from "../../generated/validate-tools-data-append-event.input.js";
import { validateToolsDataListStreamHeadsInput } from "../../generated/validate-tools-data-list-stream-heads.input.js";
import { validateToolsDataReadEventsInput } from "../../generated/validate-tools-data-read-events.input.js";
import { validateToolsDataReadProjectionInput } from "../../generated/validate-tools-data-read-projection.input.js";
import { inputValidator, validatedExecute } from "../ajv-input.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";

export { DATA_APPEND_SCOPE, DATA_READ_SCOPE };

/** The tool failure code of a stop condition. */
function failureCode(result: DataOperationResult): string {
  const code = result.stop_conditions[0]?.code;
  if (code === "needs_source") return "DATA_SOURCE_INVALID";
  if (code === "provider_unavailable") return "DATA_STORE_UNAVAILABLE";
  if (code === "needs_authority") return "POLICY_DENIED";
  if (code === "redaction_required") return "REDACTION_REQUIRED";
  return "INPUT_INVALID";
}

/** Runs one operation for a tool call. */
export async function callDataOperation(
  operation: DataOperation,
  input: JsonRecord,
  ctx: Pick<ToolContext, "workspaceRoot" | "baseEnv" | "now" | "scopes">,
): Promise<ToolResult> {
  const bindingEnv = { workspaceRoot: ctx.workspaceRoot, env: ctx.baseEnv };
  let declared: readonly string[] | undefined;
  const result = await runDataOperation(operation, input, {
    open: (source) => {
      const binding = resolveBinding(source, bindingEnv);
      declared = binding.resources;
      return openBinding(source, binding, bindingEnv);
    },
    now: () => ctx.now(),
    scopes: ctx.scopes,
    resourcesOf: () => declared,
  });
  const packet = result as unknown as JsonRecord;
  const output: JsonRecord = { ...packet, data_operation_result: artifactEnvelope(packet) };
  const stop = result.stop_conditions[0];
  if (result.status === "stopped" || result.status === "provider_unavailable") {
    return {
      status: "failure",
      code: failureCode(result),
      summary: `data.${operation} stopped (${stop?.code ?? "unknown"}): ${stop?.message ?? ""}`,
      output,
    };
  }
  const summary =
    result.status === "conflict"
      ? `conflict: ${stop?.message ?? ""}`
      : `${result.status} ${result.resource}:${result.aggregate_id} at version ${result.after_version}`;
  return { status: "success", output, summary };
}

function dataTool(spec: {
  operation: DataOperation;
  description: string;
  inputSchema: JsonRecord;
  validate: Parameters<typeof inputValidator>[0];
  mutating: boolean;
}): NativeTool {
  const name = `data.${spec.operation}`;
  const validateInput = inputValidator(spec.validate, spec.inputSchema);
  return {
    name,
    description: spec.description,
    mutating: spec.mutating,
    scopes: [spec.mutating ? DATA_APPEND_SCOPE : DATA_READ_SCOPE],
    admitsOwnScopes: true,
    inputSchema: spec.inputSchema,
    outputSchema: outputSchema,
    validateInput,
    execute: validatedExecute(name, validateInput, (input, ctx) =>
      callDataOperation(spec.operation, input, ctx),
    ),
  };
}

/** The data tools, in catalog order. */
export function dataTools(): NativeTool[] {
  return [
    dataTool({
      operation: "append_event",
      description:
        "Append one event to a governed event stream (idempotency key + expected_version); returns runx.data.operation_result.v1.",
      inputSchema: appendSchema,
      validate: validateToolsDataAppendEventInput,
      mutating: true,
    }),
    dataTool({
      operation: "read_events",
      description:
        "Read a bounded page of a stream's events (latest tail, or after_version paging).",
      inputSchema: readSchema,
      validate: validateToolsDataReadEventsInput,
      mutating: false,
    }),
    dataTool({
      operation: "read_projection",
      description: "Read a stream's head: version, event count, last event and the rolling digest.",
      inputSchema: projectionSchema,
      validate: validateToolsDataReadProjectionInput,
      mutating: false,
    }),
    dataTool({
      operation: "list_stream_heads",
      description:
        "List the latest event of each stream of a resource, newest first, with opaque keyset cursors.",
      inputSchema: headsSchema,
      validate: validateToolsDataListStreamHeadsInput,
      mutating: false,
    }),
  ];
}
