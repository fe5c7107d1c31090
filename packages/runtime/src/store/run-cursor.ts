/**
 * Opaque keyset cursors for run listings. A cursor names the last run of a page by its
 * position in the (created_ms desc, id desc) order; the next page starts strictly after it,
 * so runs inserted meanwhile never shift pages or repeat rows.
 */
import { RuntimeError } from "../errors.js";

/** The sort key of the last run on a page. */
export interface RunCursor {
  createdMs: number;
  id: string;
}

const VERSION = 1;

/** Encodes a cursor as base64url JSON (opaque to callers; versioned for later changes). */
export function encodeRunCursor(cursor: RunCursor): string {
  return Buffer.from(JSON.stringify([VERSION, cursor.createdMs, cursor.id]), "utf8").toString(
    "base64url",
  );
}

/** Decodes a cursor from `encodeRunCursor`; anything else is a USAGE error on `cursor`. */
export function decodeRunCursor(text: string): RunCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 3 &&
    parsed[0] === VERSION &&
    Number.isSafeInteger(parsed[1]) &&
    typeof parsed[2] === "string"
  ) {
    return { createdMs: parsed[1] as number, id: parsed[2] };
  }
  throw new RuntimeError("USAGE", "cursor is not a cursor returned by listRuns", {
    path: "cursor",
  });
}
