/** Adapts a precompiled ajv validator to `NativeTool.validateInput` (first error, dotted path). */
import type { ValidateFunction } from "ajv";
import type { NativeTool } from "./types.js";

/** Wraps a generated validator; the path names the offending field, never its value. */
export function inputValidator(validate: ValidateFunction): NativeTool["validateInput"] {
  return (input) => {
    if (validate(input)) return { ok: true };
    const first = validate.errors?.[0];
    const base = (first?.instancePath ?? "").replace(/^\//, "").replaceAll("/", ".");
    const params = (first?.params ?? {}) as {
      additionalProperty?: string;
      missingProperty?: string;
    };
    const field = params.additionalProperty ?? params.missingProperty;
    const path = [base, field].filter((part) => part !== undefined && part !== "").join(".");
    const message =
      params.additionalProperty !== undefined
        ? `unknown field "${params.additionalProperty}"`
        : (first?.message ?? "is invalid");
    return { ok: false, path, message };
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
