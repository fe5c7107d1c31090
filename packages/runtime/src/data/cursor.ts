/**
 * `list_stream_heads` keyset cursors: opaque and tamper-evident. A cursor names the last row of
 * a page (committed_at, aggregate_id) and is bound to the resource and the event-type filter;
 * an HMAC-SHA256 under a per-source secret (kept in the store, never in the cursor) seals it.
 * A cursor edited by hand, issued for another resource or filter, or by another store is refused.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson, hashCanonical } from "../receipts/canonical.js";
import { DataStop, isAggregateId, normalizeTimestamp } from "./model.js";

/** Where the next page starts (exclusive). */
export interface HeadsPosition {
  committed_at: string;
  aggregate_id: string;
}

const MAX_CURSOR_CHARS = 1024;
const DOMAIN = "runx.data.heads-cursor.v1\u0000";

const filterDigest = (resource: string, eventTypes: readonly string[]): string =>
  hashCanonical({ event_types: [...eventTypes], resource });

function mac(secret: Uint8Array, payload: string): Buffer {
  return createHmac("sha256", secret).update(DOMAIN).update(payload).digest();
}

/** Issues the cursor that resumes after `position`. */
export function encodeHeadsCursor(
  secret: Uint8Array,
  scope: { resource: string; eventTypes: readonly string[] },
  position: HeadsPosition,
): string {
  const payload = Buffer.from(
    canonicalJson({
      a: position.aggregate_id,
      c: position.committed_at,
      f: filterDigest(scope.resource, scope.eventTypes),
    }),
  ).toString("base64url");
  return `${payload}.${mac(secret, payload).toString("base64url")}`;
}

const refuse = (): never => {
  throw new DataStop(
    "needs_input",
    "cursor must be an opaque stream-head cursor issued by a previous page of this resource and event_types filter",
  );
};

/** Verifies and opens a cursor; throws a `needs_input` stop for anything not issued here. */
export function decodeHeadsCursor(
  secret: Uint8Array,
  scope: { resource: string; eventTypes: readonly string[] },
  cursor: string,
): HeadsPosition {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)) {
    return refuse();
  }
  const [payload = "", tag = ""] = cursor.split(".");
  const expected = mac(secret, payload);
  const given = Buffer.from(tag, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return refuse();
  }
  const body = parsed as { a?: unknown; c?: unknown; f?: unknown };
  if (
    typeof body.a !== "string" ||
    typeof body.c !== "string" ||
    body.f !== filterDigest(scope.resource, scope.eventTypes) ||
    !isAggregateId(body.a) ||
    normalizeTimestamp(body.c) !== body.c
  ) {
    return refuse();
  }
  return { committed_at: body.c, aggregate_id: body.a };
}
