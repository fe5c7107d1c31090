/** Reading a resume document from a file or stdin (4 MiB cap), kept as a continuation record. */
import { sha256Hex } from "../crypto/sha256.js";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isRuntimeError, RuntimeError } from "../errors.js";
import { readFileCapped } from "../packages/read-capped.js";
import { parseBoundedJson } from "../parser/nesting.js";
import { ensureStateDir } from "../workspace.js";

/** Resume documents larger than this are refused. */
export const RESUME_DOCUMENT_MAX_BYTES = 4 * 1024 * 1024;

/** Reads and parses the resume document; stdin input is materialised under `.runx/continuations`. */
export async function readResumeDocument(
  source: string,
  options: {
    workspaceRoot: string;
    runxDir: string;
    runId: string;
    readStdin: () => AsyncIterable<Uint8Array | string>;
  },
): Promise<unknown> {
  let bytes: Buffer;
  if (source === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of options.readStdin()) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
      size += b.length;
      if (size > RESUME_DOCUMENT_MAX_BYTES) {
        throw new RuntimeError("INPUTS_TOO_LARGE", "the resume document on stdin exceeds 4 MiB", {
          source: "stdin",
        });
      }
      chunks.push(b);
    }
    bytes = Buffer.concat(chunks);
    const digest = sha256Hex(bytes).slice(0, 16);
    const dir = join(options.runxDir, "continuations");
    // Component by component, refusing a symlinked `.runx` or `.runx/continuations`.
    ensureStateDir(dir);
    await writeFile(
      join(dir, `${options.runId.replace(/[^A-Za-z0-9._-]/g, "_")}-${digest}.answers.json`),
      bytes,
      {
        mode: 0o600,
      },
    );
  } else {
    // Capped on the descriptor: a FIFO, a device or a file that grows is refused, not read on.
    bytes = await readFileCapped({
      path: resolve(options.workspaceRoot, source),
      shown: source,
      what: "the resume document",
      maxBytes: RESUME_DOCUMENT_MAX_BYTES,
    });
  }
  try {
    const where = source === "-" ? { source: "stdin" } : { file: source };
    return parseBoundedJson(new TextDecoder("utf-8", { fatal: true }).decode(bytes), where);
  } catch (error) {
    if (isRuntimeError(error)) throw error;
    throw new RuntimeError("ANSWERS_INVALID", "the resume document is not valid UTF-8 JSON", {
      path: "$",
    });
  }
}
