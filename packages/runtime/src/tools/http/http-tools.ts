/**
 * `http.read` (GET batch), `http.query` (semantically read-only JSON POST batch) and
 * `http.execute` (mutation batch), with upstream runx's one input shape:
 * `{requests, allowed_hosts, auth?, stop_on_error}` (unknown fields refused). Requests are
 * prepared and run by ./http/ (HTTPS only, exact hosts, no caller `authorization` but an
 * `auth` binding to a delivered credential, values from earlier responses, pagination, no
 * redirects). `http.execute` needs policy approval: a graph
 * may only reach it through an approved `run: approval` guard (graph/policy-approval.ts);
 * it sends each request once. Every batch answers a `runx.http.execution.v1` packet.
 */
import { validateToolsHttpExecuteInput } from "../../generated/validate-tools-http-execute.input.js";
import { validateToolsHttpQueryInput } from "../../generated/validate-tools-http-query.input.js";
import { validateToolsHttpReadInput } from "../../generated/validate-tools-http-read.input.js";
import executeInputSchema from "../../../schemas/tools/http-execute.input.schema.json" with { type: "json" };
import executeOutputSchema from "../../../schemas/tools/http-execute.output.schema.json" with { type: "json" };
import queryInputSchema from "../../../schemas/tools/http-query.input.schema.json" with { type: "json" };
import queryOutputSchema from "../../../schemas/tools/http-query.output.schema.json" with { type: "json" };
import readInputSchema from "../../../schemas/tools/http-read.input.schema.json" with { type: "json" };
import readOutputSchema from "../../../schemas/tools/http-read.output.schema.json" with { type: "json" };
import { inputValidator, validatedExecute } from "../ajv-input.js";
import type { NetToolOptions } from "./http-exchange.js";
import { runBatch } from "./batch.js";
import type { HttpToolName } from "./batch.js";
import { isRecord } from "./resolve.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";
import { webFetchTool } from "../web/fetch.js";
import { withNamedOutput } from "../packet.js";

export { MAX_BATCH_OUTPUT_BYTES } from "./batch.js";

function resultOf(output: JsonRecord): ToolResult {
  const failure = output.failure;
  if (isRecord(failure)) {
    return {
      status: "failure",
      code: typeof failure.code === "string" ? failure.code : "INTERNAL",
      summary: typeof failure.summary === "string" ? failure.summary : "",
      output,
    };
  }
  const responses = Array.isArray(output.responses) ? output.responses.length : 0;
  const decision = typeof output.decision === "string" ? output.decision : "completed";
  return { status: "success", output, summary: `${decision}: ${responses} response(s)` };
}

async function executeBatch(
  tool: HttpToolName,
  methods: readonly string[],
  input: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<ToolResult> {
  return resultOf((await runBatch(tool, methods, input, ctx, options)).output);
}

const TOOL_SPECS: ReadonlyArray<{
  name: HttpToolName;
  description: string;
  mutating: boolean;
  methods: readonly string[];
  // JSON imports of heterogeneous arrays type their gaps as `?: undefined`; narrowed below.
  inputSchema: object;
  outputSchema: object;
  validate: NativeTool["validateInput"];
}> = [
  {
    name: "http.read",
    description: "Execute a bounded allowlisted GET batch through the governed native transport.",
    mutating: false,
    methods: ["GET"],
    inputSchema: readInputSchema,
    outputSchema: readOutputSchema,
    validate: inputValidator(validateToolsHttpReadInput),
  },
  {
    name: "http.query",
    description: "Execute a bounded allowlisted semantically read-only JSON POST batch.",
    mutating: false,
    methods: ["POST"],
    inputSchema: queryInputSchema,
    outputSchema: queryOutputSchema,
    validate: inputValidator(validateToolsHttpQueryInput),
  },
  {
    name: "http.execute",
    description:
      "Execute a bounded allowlisted HTTP mutation batch through the governed transport.",
    mutating: true,
    methods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    inputSchema: executeInputSchema,
    outputSchema: executeOutputSchema,
    validate: inputValidator(validateToolsHttpExecuteInput),
  },
];

/** The named output of every HTTP batch tool. */
const HTTP_EXECUTION = { name: "http_execution", packet: "runx.http.execution.v1" };

/** The HTTP and web tools: http.read, http.query, http.execute, web.fetch. */
export function httpTools(options: NetToolOptions = {}): NativeTool[] {
  const batchTools = TOOL_SPECS.map((spec): NativeTool =>
    withNamedOutput(
      {
        name: spec.name,
        description: spec.description,
        mutating: spec.mutating,
        scopes: ["net:http"],
        inputSchema: spec.inputSchema as JsonRecord,
        outputSchema: spec.outputSchema as JsonRecord,
        validateInput: spec.validate,
        execute: validatedExecute(spec.name, spec.validate, (input, ctx) =>
          executeBatch(spec.name, spec.methods, input, ctx, options),
        ),
      },
      HTTP_EXECUTION,
    ),
  );
  return [...batchTools, webFetchTool(options)];
}
