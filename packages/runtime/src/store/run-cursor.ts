/**
 * Opaque keyset cursors for run listings. A cursor names a run by its position in the
 * (created_ms desc, id desc) order and a direction: an `older` cursor (a page's `nextCursor`)
 * lists the runs strictly after it, a `newer` one (a page's `prevCursor`) the runs strictly
 * before it, so runs inserted meanwhile never shift pages or repeat rows.
 */
import { RuntimeError } from "../errors.js";

/** The sort key of the run a page starts after (older) or ends before (newer). */
export interface RunCursor {
  createdMs: number;
  id: string;
  /** Absent: `older` (the only direction cursors of the first format had). */
  direction?: "older" | "newer";
}

const VERSION = 1;

/**
 * Encodes a cursor as base64url JSON (opaque to callers; versioned for later changes). An
 * `older` cursor keeps the original three-element form, so cursors handed out before
 * `newer` existed still decode.
 */
export function encodeRunCursor(cursor: RunCursor): string {
  const body: unknown[] = [VERSION, cursor.createdMs, cursor.id];
  if (cursor.direction === "newer") body.push("newer");
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** Decodes a cursor from `encodeRunCursor`; anything else is a USAGE error on `cursor`. */
export function decodeRunCursor(text: string): Required<RunCursor> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    (parsed.length === 3 || (parsed.length === 4 && parsed[3] === "newer")) &&
    parsed[0] === VERSION &&
    Number.isSafeInteger(parsed[1]) &&
    typeof parsed[2] === "string"
  ) {
    return {
      createdMs: parsed[1] as number,
      id: parsed[2],
      direction: parsed.length === 4 ? "newer" : "older",
    };
  }
  throw new RuntimeError("USAGE", "cursor is not a cursor returned by listRuns", {
    path: "cursor",
  });
}
