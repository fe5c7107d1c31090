/**
 * Shared plumbing for the filesystem, command and artifact tools: the schema check runs again
 * inside `execute` (a caller that skipped `validateInput` still cannot pass a malformed input),
 * and every RuntimeError a tool body throws becomes a `failure` result carrying its code. Raw
 * errno errors become IO_ERROR with only the errno code, because Node's messages name
 * absolute host paths.
 */
import type { ValidateFunction } from "ajv";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { inputValidator } from "./ajv-input.js";
import type { Json, JsonRecord, NativeTool, ToolContext, ToolResult } from "./types.js";

/** What a tool body returns on success. */
export interface ToolSuccess<O extends JsonRecord> {
  output: O;
  summary: string;
}

/** A native tool described by its metadata, its precompiled input validator and a body. */
export interface ToolDefinition<I, O extends JsonRecord> {
  name: string;
  description: string;
  mutating: boolean;
  scopes: readonly string[];
  inputSchema: JsonRecord;
  outputSchema: JsonRecord;
  validate: ValidateFunction;
  /** Receives schema-valid input (defaults not yet applied) and throws RuntimeError to fail. */
  run(input: I, ctx: ToolContext): Promise<ToolSuccess<O>>;
}

/** Makes a JSON-safe copy of error details (drops undefined, functions and cycles' victims). */
function jsonSafe(value: unknown): Json {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as Json;
  } catch {
    return null;
  }
}

/** Converts a thrown error into a failure result; errors that are neither runtime nor errno are bugs and propagate. */
export function failureResult(error: unknown): ToolResult {
  const failure = toRuntimeError(error);
  const output: JsonRecord = { code: failure.code, message: failure.message };
  if (Object.keys(failure.details).length > 0) output.details = jsonSafe(failure.details);
  return { status: "failure", code: failure.code, summary: failure.message, output };
}

function toRuntimeError(error: unknown): RuntimeError {
  if (isRuntimeError(error)) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno === "string" && /^E[A-Z0-9]+$/.test(errno)) {
    return new RuntimeError("IO_ERROR", `filesystem operation failed (${errno})`, { errno });
  }
  throw error;
}

/** Builds a NativeTool from a definition. */
export function defineTool<I, O extends JsonRecord>(def: ToolDefinition<I, O>): NativeTool {
  const validateInput = inputValidator(def.validate, def.inputSchema);
  return {
    name: def.name,
    description: def.description,
    mutating: def.mutating,
    scopes: def.scopes,
    inputSchema: def.inputSchema,
    outputSchema: def.outputSchema,
    validateInput,
    async execute(input: JsonRecord, ctx: ToolContext): Promise<ToolResult> {
      const check = validateInput(input);
      if (!check.ok) {
        const at = check.path === "" ? "" : `${check.path}: `;
        return failureResult(
          new RuntimeError("INPUT_INVALID", `${def.name}: ${at}${check.message}`, {
            path: check.path,
          }),
        );
      }
      try {
        const { output, summary } = await def.run(input as unknown as I, ctx);
        return { status: "success", output, summary };
      } catch (error) {
        return failureResult(error);
      }
    },
  };
}
