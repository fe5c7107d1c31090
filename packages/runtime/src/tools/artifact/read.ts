/** `artifact.read`: one page of an artifact admitted in this run. */
import inputSchema from "../../../schemas/tools/artifact-read.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/artifact-read.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsArtifactReadInput } from "../../generated/validate-tools-artifact-read.input.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { frameJsonArray, frameUtf8, type JsonArrayPosition } from "./framing.js";
import { lookupArtifact } from "./store.js";
import { defineTool } from "../define-tool.js";
import { openForRead, readAt } from "../file-io.js";
import type { NativeTool } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** Default and maximum page size. */
export const ARTIFACT_PAGE_DEFAULT_BYTES = 1024 * 1024;
export const ARTIFACT_PAGE_MAX_BYTES = 4 * 1024 * 1024;

/** How a page's bytes are returned. */
export type ArtifactEncoding = "base64" | "utf8" | "json_array";

/** `artifact.read` input after schema validation. */
export interface ArtifactReadInput {
  artifact_ref: string;
  offset?: number;
  max_bytes?: number;
  encoding?: ArtifactEncoding;
}

/** `runx.local_artifact.page.v1`. */
export type ArtifactPage = {
  artifact_ref: string;
  media_type: string;
  offset: number;
  length: number;
  next_offset: number;
  eof: boolean;
  range_digest: string;
  whole_digest: string;
  encoding: ArtifactEncoding;
  data?: string;
  records?: string[];
};

/** Where a json_array page at `offset` starts, from the byte before it. */
function positionAt(previous: number | undefined, offset: number): JsonArrayPosition {
  if (offset === 0) return "start";
  if (previous === 0x2c) return "record";
  if (previous === 0x5d) return "closed";
  throw new RuntimeError(
    "INPUT_INVALID",
    `artifact.read: offset ${offset} is not a record boundary (use a page's next_offset)`,
    { path: "offset" },
  );
}

/** The `artifact.read` tool. */
export const artifactReadTool: NativeTool = withNamedOutput(
  defineTool<ArtifactReadInput, ArtifactPage>({
    name: "artifact.read",
    description:
      "Read one page (at most 4 MiB) of an artifact admitted in this run: base64, UTF-8 text never split inside a character, or JSON array records.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsArtifactReadInput,
    async run(input, ctx) {
      const artifact = await lookupArtifact(ctx.runDir, input.artifact_ref);
      const offset = input.offset ?? 0;
      const maxBytes = input.max_bytes ?? ARTIFACT_PAGE_DEFAULT_BYTES;
      const encoding = input.encoding ?? "base64";
      if (offset > artifact.bytes) {
        throw new RuntimeError(
          "INPUT_INVALID",
          `artifact.read: offset ${offset} is past the end (${artifact.bytes} bytes)`,
          { path: "offset" },
        );
      }
      const remaining = artifact.bytes - offset;
      const handle = await openForRead(artifact.blob);
      let window: Buffer;
      let previous: number | undefined;
      try {
        // utf8 looks one byte past the page to know whether the cut splits a character.
        const extra = encoding === "utf8" ? 1 : 0;
        window = await readAt(handle, Math.min(maxBytes + extra, remaining), offset);
        if (encoding === "json_array" && offset > 0)
          previous = (await readAt(handle, 1, offset - 1))[0];
      } finally {
        await handle.close();
      }
      const page: Pick<ArtifactPage, "data" | "records"> = {};
      let length: number;
      if (remaining === 0) {
        length = 0;
        // A json_array page with no records carries neither field, as upstream's packet omits
        // an empty `records`.
        if (encoding !== "json_array") page.data = "";
      } else if (encoding === "base64") {
        length = window.length;
        page.data = window.toString("base64");
      } else if (encoding === "utf8") {
        const framed = frameUtf8(window, maxBytes, offset);
        length = framed.length;
        page.data = framed.text;
      } else {
        const framed = frameJsonArray(window, {
          position: positionAt(previous, offset),
          reachesEnd: window.length === remaining,
          offset,
        });
        length = framed.length;
        if (framed.records.length > 0) page.records = framed.records;
      }
      const nextOffset = offset + length;
      const output: ArtifactPage = {
        artifact_ref: artifact.artifact_ref,
        media_type: artifact.media_type,
        offset,
        length,
        next_offset: nextOffset,
        eof: nextOffset === artifact.bytes,
        range_digest: sha256Prefixed(window.subarray(0, length)),
        whole_digest: artifact.whole_digest,
        encoding,
        ...page,
      };
      return { output, summary: `read ${length} bytes at ${offset}${output.eof ? " (eof)" : ""}` };
    },
  }),
  { name: "artifact_page", packet: "runx.local_artifact.page.v1" },
);
