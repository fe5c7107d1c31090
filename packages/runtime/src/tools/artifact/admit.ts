/** `artifact.admit`: snapshot one contained file and return an opaque run-scoped reference. */
import inputSchema from "../../../schemas/tools/artifact-admit.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/artifact-admit.output.schema.json" with { type: "json" };
import { validateToolsArtifactAdmitInput } from "../../generated/validate-tools-artifact-admit.input.js";
import { admitArtifact } from "./store.js";
import { defineTool } from "../define-tool.js";
import { resolveReadable, resolveRoot, type PathScope } from "../paths.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** `artifact.admit` input after schema validation. */
export interface ArtifactAdmitInput {
  repo_root?: string;
  path_scope?: PathScope;
  path: string;
  media_type?: string;
}

/** `runx.local_artifact.v1`: no path, ever. */
export type LocalArtifact = {
  artifact_ref: string;
  media_type: string;
  bytes: number;
  whole_digest: string;
};

/** The `artifact.admit` tool. */
export const artifactAdmitTool: NativeTool = withNamedOutput(
  defineTool<ArtifactAdmitInput, LocalArtifact>({
    name: "artifact.admit",
    description:
      "Snapshot one regular file (at most 512 MiB) into the run's artifact area and return an opaque run-scoped reference with its media type, size and digest.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsArtifactAdmitInput,
    async run(input, ctx) {
      const root = await resolveRoot(ctx, {
        repoRoot: input.repo_root,
        pathScope: input.path_scope,
      });
      const source = await resolveReadable(root, input.path, "path");
      const stored = await admitArtifact({
        runDir: ctx.runDir,
        source,
        mediaType: (input.media_type ?? "application/octet-stream").trim(),
      });
      const output: LocalArtifact = {
        artifact_ref: stored.artifact_ref,
        media_type: stored.media_type,
        bytes: stored.bytes,
        whole_digest: stored.whole_digest,
      };
      return { output, summary: `admitted ${output.bytes} bytes as ${output.media_type}` };
    },
  }),
  { name: "local_artifact", packet: "runx.local_artifact.v1" },
);
