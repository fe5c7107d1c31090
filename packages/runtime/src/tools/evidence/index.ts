/** The evidence tool family: source indexing and artifact verification. */
import { evidenceIndexSourcesTool } from "./index-sources.js";
import { evidenceVerifyArtifactTool } from "./verify-artifact.js";
import type { NativeTool } from "../types.js";

/** `evidence.index_sources` and `evidence.verify_artifact`. */
export function evidenceTools(): NativeTool[] {
  return [evidenceIndexSourcesTool, evidenceVerifyArtifactTool];
}
