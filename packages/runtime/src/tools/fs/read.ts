/** `fs.read`: one bounded UTF-8 text read inside the workspace or the skill package. */
import inputSchema from "../../../schemas/tools/fs-read.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/fs-read.output.schema.json" with { type: "json" };
import { validateToolsFsReadInput } from "../../generated/validate-tools-fs-read.input.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { decodeUtf8, openForRead, readAt, utf8BoundaryAtOrBefore } from "../file-io.js";
import { resolveReadable, resolveRoot, type ContainedPath, type PathScope } from "../paths.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** Default and maximum `max_bytes` of one file read. */
export const FS_READ_DEFAULT_BYTES = 1024 * 1024;
export const FS_READ_MAX_BYTES = 8 * 1024 * 1024;

/** `fs.read` input after schema validation. */
export interface FsReadInput {
  repo_root?: string;
  path_scope?: PathScope;
  path: string;
  max_bytes?: number;
}

/** `runx.fs.file_read.v1`. */
export type FileRead = {
  path: string;
  repo_root: string;
  contents: string;
  bytes: number;
  truncated: boolean;
  content_digest: string;
};

/**
 * Reads at most `maxBytes` of a contained file as UTF-8. A cut inside a multi-byte character
 * backs off to the previous boundary; bytes that are not UTF-8 fail with INPUT_INVALID.
 */
export async function readTextFile(
  file: ContainedPath,
  repoRoot: string,
  maxBytes: number,
): Promise<FileRead> {
  const handle = await openForRead(file.absolute);
  let raw: Buffer;
  try {
    // One byte past the bound tells "exactly max_bytes long" apart from "longer".
    raw = await readAt(handle, maxBytes + 1, 0);
  } finally {
    await handle.close();
  }
  const truncated = raw.length > maxBytes;
  const kept = raw.subarray(0, truncated ? utf8BoundaryAtOrBefore(raw, maxBytes) : raw.length);
  return {
    path: file.relative,
    repo_root: repoRoot,
    contents: decodeUtf8(kept, JSON.stringify(file.relative)),
    bytes: kept.length,
    truncated,
    content_digest: sha256Prefixed(kept),
  };
}

/** The `fs.read` tool. */
export const fsReadTool: NativeTool = withNamedOutput(
  defineTool<FsReadInput, FileRead>({
    name: "fs.read",
    description:
      "Read one UTF-8 text file inside the workspace (or the skill package), at most 8 MiB.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsFsReadInput,
    async run(input, ctx) {
      const root = await resolveRoot(ctx, {
        repoRoot: input.repo_root,
        pathScope: input.path_scope,
      });
      const file = await resolveReadable(root, input.path, "path");
      const output = await readTextFile(file, root.label, input.max_bytes ?? FS_READ_DEFAULT_BYTES);
      const note = output.truncated ? " (truncated)" : "";
      return { output, summary: `read ${output.path}: ${output.bytes} bytes${note}` };
    },
  }),
  { name: "file_read", packet: "runx.fs.file_read.v1" },
);
