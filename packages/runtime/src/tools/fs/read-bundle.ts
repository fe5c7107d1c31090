/** `fs.read_bundle`: up to 16 bounded UTF-8 reads in one call, 32 MiB in total. */
import inputSchema from "../../../schemas/tools/fs-read-bundle.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/fs-read-bundle.output.schema.json" with { type: "json" };
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { validateToolsFsReadBundleInput } from "../../generated/validate-tools-fs-read-bundle.input.js";
import { defineTool } from "../define-tool.js";
import { FS_READ_MAX_BYTES, readTextFile, type FileRead } from "./read.js";
import { resolveReadable, resolveRoot, splitRelative, type PathScope } from "../paths.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** Files per bundle and bytes per bundle. */
export const FS_READ_BUNDLE_MAX_FILES = 16;
export const FS_READ_BUNDLE_MAX_TOTAL_BYTES = 32 * 1024 * 1024;

/** `fs.read_bundle` input after schema validation. */
export interface FsReadBundleInput {
  repo_root?: string;
  path_scope?: PathScope;
  paths: string[];
  max_bytes?: number;
  on_missing?: "error" | "report";
}

/** `runx.fs.file_read_bundle.v1`. */
export type FileReadBundle = {
  repo_root: string;
  file_count: number;
  total_bytes: number;
  files: FileRead[];
  missing: Array<{ path: string; reason: string }>;
};

/** Refuses two spellings of one file (`a` and `./a`) before anything is read. */
function assertDistinct(paths: readonly string[]): void {
  const seen = new Set<string>();
  paths.forEach((path, i) => {
    const normal = splitRelative(path, `paths.${i}`).join("/");
    if (seen.has(normal)) {
      throw new RuntimeError("INPUT_INVALID", `paths.${i} names the same file twice`, {
        path: `paths.${i}`,
        target: path,
      });
    }
    seen.add(normal);
  });
}

/** The `fs.read_bundle` tool. */
export const fsReadBundleTool: NativeTool = withNamedOutput(
  defineTool<FsReadBundleInput, FileReadBundle>({
    name: "fs.read_bundle",
    description:
      "Read up to 16 UTF-8 text files inside the workspace (or the skill package), 32 MiB in total.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsFsReadBundleInput,
    async run(input, ctx) {
      const root = await resolveRoot(ctx, {
        repoRoot: input.repo_root,
        pathScope: input.path_scope,
      });
      assertDistinct(input.paths);
      const maxBytes = input.max_bytes ?? FS_READ_MAX_BYTES;
      const files: FileRead[] = [];
      const missing: FileReadBundle["missing"] = [];
      let total = 0;
      for (const [i, path] of input.paths.entries()) {
        let file: FileRead;
        try {
          file = await readTextFile(
            await resolveReadable(root, path, `paths.${i}`),
            root.label,
            maxBytes,
          );
        } catch (error) {
          // Only absence is reportable; an escape or a limit always fails the whole call.
          if (
            input.on_missing === "report" &&
            isRuntimeError(error) &&
            error.code === "FILE_NOT_FOUND"
          ) {
            missing.push({
              path,
              reason: "file was unavailable within the declared root and read limits",
            });
            continue;
          }
          throw error;
        }
        total += file.bytes;
        if (total > FS_READ_BUNDLE_MAX_TOTAL_BYTES) {
          throw new RuntimeError(
            "LIMIT_EXCEEDED",
            `fs.read_bundle: the bundle exceeds ${FS_READ_BUNDLE_MAX_TOTAL_BYTES} bytes`,
            { path: `paths.${i}`, limit: FS_READ_BUNDLE_MAX_TOTAL_BYTES },
          );
        }
        files.push(file);
      }
      const output: FileReadBundle = {
        repo_root: root.label,
        file_count: files.length,
        total_bytes: total,
        files,
        missing,
      };
      const note = missing.length > 0 ? `, ${missing.length} missing` : "";
      return { output, summary: `read ${files.length} files, ${total} bytes${note}` };
    },
  }),
  { name: "file_read_bundle", packet: "runx.fs.file_read_bundle.v1" },
);
