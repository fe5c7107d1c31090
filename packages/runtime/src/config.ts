/** Project configuration `.runx/config.json`, validated against its JSON Schema. */
import { readFileSync } from "node:fs";
import { RuntimeError } from "./errors.js";
import { validateRunxConfig } from "./generated/validate-runx-config.js";

/** The typed project configuration. */
export interface ProjectConfig {
  policy: { strictCliToolInlineCode: boolean };
}

/** Reads `.runx/config.json`; a missing file means defaults, a malformed one is an error. */
export function readProjectConfig(file: string, label = ".runx/config.json"): ProjectConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { policy: { strictCliToolInlineCode: false } };
    }
    throw new RuntimeError("IO_ERROR", `cannot read ${label}`, { file: label });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RuntimeError("PROFILE_INVALID", "is not valid JSON", { file: label });
  }
  if (!validateRunxConfig(value)) {
    const first = validateRunxConfig.errors?.[0];
    const path = (first?.instancePath ?? "").replace(/^\//, "").replaceAll("/", ".");
    const extra = first?.params as { additionalProperty?: string } | undefined;
    const field = extra?.additionalProperty;
    throw new RuntimeError(
      "PROFILE_INVALID",
      field !== undefined
        ? `unknown field "${field}"`
        : (first?.message ?? "invalid configuration"),
      { file: label, path: field !== undefined ? [path, field].filter(Boolean).join(".") : path },
    );
  }
  const v = value as { policy?: { strict_cli_tool_inline_code?: boolean } };
  return { policy: { strictCliToolInlineCode: v.policy?.strict_cli_tool_inline_code === true } };
}
