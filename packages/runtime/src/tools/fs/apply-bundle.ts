/** `fs.apply_bundle`: several writes and deletes inside the workspace, all or nothing. */
import inputSchema from "../../../schemas/tools/fs-apply-bundle.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/fs-apply-bundle.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsFsApplyBundleInput } from "../../generated/validate-tools-fs-apply-bundle.input.js";
import { defineTool } from "../define-tool.js";
import {
  applyTransaction,
  planTransaction,
  type TransactionReport,
  type WriteRequest,
} from "./transaction.js";
import { resolveRoot } from "../paths.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** `fs.apply_bundle` input after schema validation. */
export interface FsApplyBundleInput {
  repo_root?: string;
  writes?: WriteRequest[];
  deletes?: string[];
}

/** `runx.fs.apply_bundle.v1`. */
export type FileBundleApply = {
  repo_root: string;
  write_count: number;
  delete_count: number;
  writes: TransactionReport["writes"];
  deletes: TransactionReport["deletes"];
};

/** The `fs.apply_bundle` tool. */
export const fsApplyBundleTool: NativeTool = withNamedOutput(
  defineTool<FsApplyBundleInput, FileBundleApply>({
    name: "fs.apply_bundle",
    description:
      "Apply several file writes and deletes inside the workspace all-or-nothing; every path is checked before anything changes.",
    mutating: true,
    scopes: ["fs.write", "fs.delete"],
    inputSchema,
    outputSchema,
    validate: validateToolsFsApplyBundleInput,
    async run(input, ctx) {
      const writes = input.writes ?? [];
      const deletes = input.deletes ?? [];
      if (writes.length + deletes.length === 0) {
        throw new RuntimeError("INPUT_INVALID", "fs.apply_bundle: nothing to apply", {
          path: "writes",
        });
      }
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      const plan = await planTransaction(root, {
        writes,
        deletes,
        writeField: (i) => `writes.${i}.path`,
      });
      const report = await applyTransaction(plan);
      const output: FileBundleApply = {
        repo_root: root.label,
        write_count: report.writes.length,
        delete_count: report.deletes.length,
        writes: report.writes,
        deletes: report.deletes,
      };
      return {
        output,
        summary: `applied ${output.write_count} writes and ${output.delete_count} deletes`,
      };
    },
  }),
  { name: "file_bundle_apply", packet: "runx.fs.apply_bundle.v1" },
);
