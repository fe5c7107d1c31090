/** Reads a command's `--input <file|->` document: a workspace-relative file or stdin, capped. */
import { resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import { readFileCapped } from "../packages/read-capped.js";
import type { CommandContext } from "./context.js";

/** What the document is called in messages (`the kernel input`) and its size cap. */
export interface DocumentInput {
  what: string;
  maxBytes: number;
}

function mib(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}

/**
 * The document's text: INPUTS_TOO_LARGE past the cap on stdin, FILE_TOO_LARGE for a file,
 * IO_ERROR naming the file otherwise.
 */
export async function readDocumentInput(
  source: string,
  ctx: CommandContext,
  input: DocumentInput,
): Promise<string> {
  if (source === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.stdin as AsyncIterable<Buffer | string>) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > input.maxBytes) {
        throw new RuntimeError(
          "INPUTS_TOO_LARGE",
          `${input.what} on stdin exceeds ${mib(input.maxBytes)}`,
        );
      }
      chunks.push(b);
    }
    return Buffer.concat(chunks).toString("utf8");
  }
  // Capped on the descriptor: a FIFO, a device or a file that grows is refused, not read on.
  const data = await readFileCapped({
    path: resolve(ctx.env.workspaceRoot, source),
    shown: source,
    what: `${input.what} file`,
    maxBytes: input.maxBytes,
  });
  return data.toString("utf8");
}
