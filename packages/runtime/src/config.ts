/** Project configuration `.runx/config.json`, validated against its JSON Schema. */
import { isRuntimeError, RuntimeError } from "./errors.js";
import { readFileCappedSync } from "./packages/read-capped.js";
import { parseBoundedJson } from "./parser/nesting.js";
import { validateRunxConfig } from "./generated/validate-runx-config.js";
import type { RegisteredPayee } from "./tools/types.js";

/** The typed project configuration. */
export interface ProjectConfig {
  policy: { strictCliToolInlineCode: boolean };
  /** `payments.payees`; undefined when the workspace registers none (no registry). */
  payees?: readonly RegisteredPayee[];
}

/** `.runx/config.json` larger than this is refused (FILE_TOO_LARGE). */
export const CONFIG_MAX_BYTES = 1024 * 1024;

/** Reads `.runx/config.json`; a missing file means defaults, a malformed one is an error. */
export function readProjectConfig(file: string, label = ".runx/config.json"): ProjectConfig {
  let text: string;
  try {
    text = readFileCappedSync({
      path: file,
      shown: label,
      what: label,
      maxBytes: CONFIG_MAX_BYTES,
    }).toString("utf8");
  } catch (error) {
    if (isRuntimeError(error) && error.details.cause === "ENOENT") {
      return { policy: { strictCliToolInlineCode: false } };
    }
    throw error;
  }
  let value: unknown;
  try {
    value = parseBoundedJson(text, { file: label });
  } catch (error) {
    if (isRuntimeError(error)) throw error;
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
  const v = value as {
    policy?: { strict_cli_tool_inline_code?: boolean };
    payments?: { payees?: RegisteredPayee[] };
  };
  const payees = v.payments?.payees;
  const parties = new Set<string>();
  for (const [index, payee] of (payees ?? []).entries()) {
    if (parties.has(payee.party_ref)) {
      throw new RuntimeError("PROFILE_INVALID", `payee ${payee.party_ref} is registered twice`, {
        file: label,
        path: `payments.payees.${index}.party_ref`,
      });
    }
    parties.add(payee.party_ref);
    if ((payee.settlement_ref === undefined) === (payee.settlement_digest === undefined)) {
      throw new RuntimeError(
        "PROFILE_INVALID",
        "a payee needs exactly one of settlement_ref and settlement_digest",
        { file: label, path: `payments.payees.${index}` },
      );
    }
  }
  return {
    policy: { strictCliToolInlineCode: v.policy?.strict_cli_tool_inline_code === true },
    ...(payees !== undefined ? { payees } : {}),
  };
}
