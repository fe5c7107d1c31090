/**
 * Local process tools: `tools/<namespace>/<tool>/manifest.json` (`runx.tool.manifest.v1`,
 * upstream's tool package shape). The manifest is the tool's single contract; this module
 * reads and validates it and reports the first problem as one sentence naming the field (`source.command is required.`).
 */
import type { ErrorObject } from "ajv";
import { isRuntimeError } from "../errors.js";
import { validateToolManifest } from "../generated/validate-tool-manifest.js";
import { readFileCappedSync } from "../packages/read-capped.js";
import { parseBoundedJson } from "../parser/nesting.js";
import type { Json, JsonRecord } from "../tools/types.js";

/** One declared input of a tool (the shape `runx tool inspect` prints). */
export interface ToolInputDefinition {
  type: string;
  required: boolean;
  description?: string;
  default?: Json;
  artifact?: Json;
  packet?: string;
  schema?: JsonRecord;
}

/** How the tool runs. */
export interface ToolManifestSource {
  type: "cli-tool" | "javascript" | "mcp" | "a2a";
  command?: string;
  module?: string;
  export?: string;
  args?: string[];
  cwd?: string;
  input_mode?: "args" | "stdin" | "none";
  timeout_seconds?: number;
  server?: { command: string; args?: string[]; cwd?: string };
  tool?: string;
  agent_card_url?: string;
}

/** A validated `runx.tool.manifest.v1` document (fields this runtime reads). */
export interface ToolManifest {
  schema: "runx.tool.manifest.v1";
  name: string;
  version?: string;
  description?: string;
  source: ToolManifestSource;
  inputs: Record<string, ToolInputDefinition>;
  scopes: string[];
  mutating?: boolean;
  risk?: Json;
  artifacts?: JsonRecord;
}

/** The outcome of reading one manifest: the manifest, or one sentence naming the bad field. */
export type ManifestResult = { ok: true; manifest: ToolManifest } | { ok: false; problem: string };

function fieldPath(pointer: string): string {
  return pointer
    .slice(1)
    .split("/")
    .filter((part) => part !== "")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join("");
}

function join(path: string, field: string): string {
  return path === "" ? field : `${path}.${field}`;
}

/** One sentence for one ajv error; never quotes document values. */
function sentence(error: ErrorObject): string {
  const path = fieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const subject = path === "" ? "the manifest" : path;
  switch (error.keyword) {
    case "required":
      return `${join(path, String(params.missingProperty))} is required.`;
    case "additionalProperties":
      return `${join(path, String(params.additionalProperty))} is not a field of ${path === "" ? "runx.tool.manifest.v1" : path}.`;
    case "const":
      return `${subject} must be ${JSON.stringify(params.allowedValue)}.`;
    case "enum":
      return `${subject} must be one of: ${(params.allowedValues as unknown[]).map(String).join(", ")}.`;
    case "type":
      return `${subject} must be ${String(params.type).split(",").join(" or ")}.`;
    case "pattern":
      return path === "name"
        ? "name must be a dotted tool name (<namespace>.<tool>)."
        : `${subject} has an invalid format.`;
    case "minLength":
      return `${subject} must not be empty.`;
    case "minimum":
      return `${subject} must be at least ${String(params.limit)}.`;
    default:
      return `${subject} ${error.message ?? "is invalid"}.`;
  }
}

/** Validates a parsed manifest document. */
export function validateManifest(document: unknown): ManifestResult {
  if (!validateToolManifest(document)) {
    const errors = (validateToolManifest.errors ?? []).filter((e) => e.keyword !== "if");
    const first = errors[0];
    return { ok: false, problem: first === undefined ? "manifest is invalid." : sentence(first) };
  }
  const doc = document as Omit<ToolManifest, "inputs" | "scopes"> & {
    inputs?: Record<string, Omit<ToolInputDefinition, "required"> & { required?: boolean }>;
    scopes?: string[];
  };
  const inputs: Record<string, ToolInputDefinition> = {};
  for (const [name, input] of Object.entries(doc.inputs ?? {})) {
    inputs[name] = { ...input, required: input.required ?? false };
  }
  return { ok: true, manifest: { ...doc, inputs, scopes: doc.scopes ?? [] } };
}

/** A tool manifest larger than this is refused. */
export const MANIFEST_MAX_BYTES = 1024 * 1024;

/** Reads and validates `manifestPath`; a missing file or bad JSON is a problem, not a throw. */
export function readManifest(manifestPath: string): ManifestResult {
  let text: string;
  try {
    // Capped on the descriptor (a FIFO, a device or a huge file is a problem, not a hang).
    text = readFileCappedSync({
      path: manifestPath,
      shown: "manifest.json",
      what: "manifest.json",
      maxBytes: MANIFEST_MAX_BYTES,
    }).toString("utf8");
  } catch (error) {
    const cause = isRuntimeError(error) ? error.details.cause : undefined;
    const problem =
      cause === "ENOENT"
        ? "manifest.json is missing."
        : isRuntimeError(error)
          ? `${error.message}.`
          : "manifest.json is unreadable.";
    return { ok: false, problem };
  }
  let document: unknown;
  try {
    document = parseBoundedJson(text);
  } catch {
    // The parser's message can quote the document; name the file only.
    return { ok: false, problem: "manifest.json is not valid JSON." };
  }
  return validateManifest(document);
}
