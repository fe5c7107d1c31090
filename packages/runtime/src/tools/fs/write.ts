/** `fs.write`: one atomic UTF-8 file write inside the workspace. */
import inputSchema from "../../../schemas/tools/fs-write.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/fs-write.output.schema.json" with { type: "json" };
import { validateToolsFsWriteInput } from "../../generated/validate-tools-fs-write.input.js";
import { defineTool } from "../define-tool.js";
import { applyTransaction, planTransaction } from "./transaction.js";
import { resolveRoot } from "../paths.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** `fs.write` input after schema validation. */
export interface FsWriteInput {
  repo_root?: string;
  path: string;
  contents: string;
}

/** `runx.fs.file_write.v1` (`sha256` is bare lowercase hex). */
export type FileWrite = {
  path: string;
  repo_root: string;
  bytes_written: number;
  sha256: string;
};

/** The `fs.write` tool. */
export const fsWriteTool: NativeTool = withNamedOutput(
  defineTool<FsWriteInput, FileWrite>({
    name: "fs.write",
    description:
      "Write one UTF-8 text file inside the workspace atomically (temp file, fsync, rename); creates parent directories.",
    mutating: true,
    scopes: ["fs.write"],
    inputSchema,
    outputSchema,
    validate: validateToolsFsWriteInput,
    async run(input, ctx) {
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      const plan = await planTransaction(root, {
        writes: [{ path: input.path, contents: input.contents }],
        deletes: [],
        writeField: () => "path",
      });
      const [written] = (await applyTransaction(plan)).writes;
      if (written === undefined) throw new Error("fs.write: the transaction reported no write");
      // Upstream's fs.write packet carries the bare hex digest (fs.apply_bundle keeps the
      // `sha256:` prefix on each write).
      const output: FileWrite = {
        path: written.path,
        repo_root: root.label,
        bytes_written: written.bytes_written,
        sha256: written.sha256.replace(/^sha256:/, ""),
      };
      return { output, summary: `wrote ${output.path}: ${output.bytes_written} bytes` };
    },
  }),
  { name: "file_write", packet: "runx.fs.file_write.v1" },
);
