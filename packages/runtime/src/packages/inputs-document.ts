/**
 * `--inputs <file|->`: one JSON object read from a workspace file or stdin.
 * The file must resolve (after symlinks) inside the workspace and be a regular file; both
 * sources are capped at 64 MiB and stdin is not read past the cap. Errors never contain any
 * part of the document.
 */
import { constants } from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isRuntimeError, RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import { parseBoundedJson } from "../parser/nesting.js";
import type { JsonObject } from "../parser/json.js";

/** The size cap for an inputs document (file or stdin). */
export const INPUTS_DOCUMENT_MAX_BYTES = 64 * 1024 * 1024;
const READ_CHUNK_BYTES = 1024 * 1024;

/** Options for {@link readInputsDocument}. */
export interface ReadInputsDocumentOptions {
  workspaceRoot: string;
  /** Returns the stdin stream; called only for `-`. */
  readStdin: () => AsyncIterable<Uint8Array | string> | NodeJS.ReadableStream;
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

async function readStdinCapped(options: ReadInputsDocumentOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of options.readStdin() as AsyncIterable<Uint8Array | string>) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    total += buffer.length;
    if (total > INPUTS_DOCUMENT_MAX_BYTES) {
      // Leaving the loop stops reading; nothing past the cap is buffered.
      throw new RuntimeError("INPUTS_TOO_LARGE", "the inputs document is larger than 64 MiB", {
        source: "stdin",
        limit: INPUTS_DOCUMENT_MAX_BYTES,
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}

async function readFileCapped(spec: string, options: ReadInputsDocumentOptions): Promise<Buffer> {
  const details = { file: spec, source: "file" };
  const base = path.resolve(options.workspaceRoot);
  const root = await realpath(base);
  const candidate = path.resolve(base, spec);
  // Lexical check first, so nothing outside the workspace is even probed for existence.
  if (!isInside(base, candidate) && !isInside(root, candidate)) {
    throw new RuntimeError("PATH_ESCAPE", "the inputs file must be inside the workspace", details);
  }
  const real = await realpath(candidate).catch(() => {
    throw new RuntimeError("INPUTS_DOCUMENT_INVALID", "the inputs file does not exist", details);
  });
  if (!isInside(root, real)) {
    throw new RuntimeError(
      "PATH_ESCAPE",
      "the inputs file resolves outside the workspace",
      details,
    );
  }
  const info = await stat(real);
  if (!info.isFile())
    throw new RuntimeError(
      "INPUTS_DOCUMENT_INVALID",
      "the inputs file must be a regular file",
      details,
    );
  const tooLarge = (): RuntimeError =>
    new RuntimeError("INPUTS_TOO_LARGE", "the inputs document is larger than 64 MiB", {
      ...details,
      limit: INPUTS_DOCUMENT_MAX_BYTES,
    });
  if (info.size > INPUTS_DOCUMENT_MAX_BYTES) throw tooLarge();

  // O_NONBLOCK: if the path was swapped for a FIFO after the check, open must not hang.
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) {
      throw new RuntimeError(
        "INPUTS_DOCUMENT_INVALID",
        "the inputs file must be a regular file",
        details,
      );
    }
    // Read to EOF in chunks rather than trusting the earlier size: the file may have changed.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > INPUTS_DOCUMENT_MAX_BYTES) throw tooLarge();
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/**
 * Reads `--inputs <spec>`: `-` for stdin, else a path relative to the workspace root.
 * Throws PATH_ESCAPE, INPUTS_TOO_LARGE or INPUTS_DOCUMENT_INVALID.
 */
export async function readInputsDocument(
  spec: string,
  options: ReadInputsDocumentOptions,
): Promise<JsonObject> {
  if (spec === "") throw new RuntimeError("USAGE", "--inputs needs a file path or - for stdin");
  const details = spec === "-" ? { source: "stdin" } : { file: spec, source: "file" };
  const bytes = spec === "-" ? await readStdinCapped(options) : await readFileCapped(spec, options);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RuntimeError(
      "INPUTS_DOCUMENT_INVALID",
      "the inputs document is not valid UTF-8",
      details,
    );
  }
  let value: unknown;
  try {
    value = parseBoundedJson(text, details);
  } catch (error) {
    if (isRuntimeError(error)) throw error;
    // The engine's message quotes the document, so it is deliberately dropped.
    throw new RuntimeError(
      "INPUTS_DOCUMENT_INVALID",
      "the inputs document must be exactly one JSON value",
      details,
    );
  }
  if (!isJsonObject(value))
    throw new RuntimeError(
      "INPUTS_DOCUMENT_INVALID",
      "the inputs document must be a JSON object",
      details,
    );
  return value;
}
