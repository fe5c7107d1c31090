/** Adapts a precompiled ajv validator to `NativeTool.validateInput` (first error, dotted path). */
import type { ValidateFunction } from "ajv";
import { firstProblem } from "../parser/field-problem.js";
import type { SchemaNode } from "../parser/field-problem.js";
import type { NativeTool } from "./types.js";

/**
 * Wraps a generated validator; the path names the offending field, never its value, and the
 * message is the rule it breaks in plain words (callers put the path in front). `schema`, the
 * tool's input schema, lets an unknown field be answered with the accepted ones.
 */
export function inputValidator(
  validate: ValidateFunction,
  schema?: SchemaNode,
): NativeTool["validateInput"] {
  return (input) => {
    if (validate(input)) return { ok: true };
    const problem = firstProblem(validate.errors, schema);
    return {
      ok: false,
      path: problem?.path ?? "",
      message: problem?.problem ?? "is not valid",
    };
  };
}

/** Wraps an `execute` so its input is checked again first (a caller that skipped validateInput fails closed). */
export function validatedExecute(
  name: string,
  validateInput: NativeTool["validateInput"],
  execute: NativeTool["execute"],
): NativeTool["execute"] {
  return (input, ctx) => {
    const check = validateInput(input);
    if (check.ok) return execute(input, ctx);
    const at = check.path === "" ? "" : `${check.path}: `;
    return Promise.resolve({
      status: "failure",
      code: "INPUT_INVALID",
      summary: `${name}: ${at}${check.message}`,
    });
  };
}
