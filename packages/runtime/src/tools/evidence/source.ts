/**
 * One governed source packet admitted into an evidence index: a `web.fetch` result (its
 * extracted text, final URL and fetch provenance) or an `fs.read` result (its contents, path
 * and digest). Each check that fails becomes one blocker sentence; a packet with blockers is
 * not indexed. The source digest is the sha256 of the admitted text, so a claim can cite the
 * exact text it rests on. Pure.
 */
import { sha256Prefixed } from "../../receipts/canonical.js";
import { isRecord } from "../packet.js";
import type { Json, JsonRecord } from "../types.js";
import { isLowerSha256, objectOf, textOf } from "./values.js";

/** What the index keeps of one admitted source. */
export interface IndexedSource {
  source_digest: string;
  content_digest: string;
  source_ref: string;
  source_kind: "fetch" | "local_file";
  extracted: string;
  provenance: JsonRecord;
}

/** The packet inside a step output envelope: `{data}`, `{fetch_result: {data}}`, `{file_read: {data}}`. */
export function unwrapSourcePacket(value: Json): JsonRecord {
  const packet = objectOf(value);
  if (isRecord(packet.data)) return packet.data;
  for (const output of ["fetch_result", "file_read"]) {
    const data = objectOf(packet[output]).data;
    if (isRecord(data)) return data;
  }
  return packet;
}

/** A non-negative integer, also from a number-like string ("12"); otherwise undefined. */
function nonNegativeInteger(value: Json | undefined): number | undefined {
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value === "string" && /^\+?[0-9]+$/.test(value.trim())) {
    const parsed = Number(value.trim().replace(/^\+/, ""));
    return Number.isSafeInteger(parsed) ? parsed : undefined;
  }
  return undefined;
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const scheme = new URL(value).protocol;
  return scheme === "http:" || scheme === "https:";
}

/** Admits one packet (a local file read when it carries `contents`, else a fetch). */
export function indexSource(
  packet: JsonRecord,
  observedAt: string,
  maxCharacters: number,
): { ok: true; source: IndexedSource } | { ok: false; blockers: string[] } {
  return Object.hasOwn(packet, "contents")
    ? fromLocalFile(packet, observedAt, maxCharacters)
    : fromFetch(packet, maxCharacters);
}

function fromFetch(
  packet: JsonRecord,
  maxCharacters: number,
): { ok: true; source: IndexedSource } | { ok: false; blockers: string[] } {
  const extracted = textOf(packet.extracted);
  const finalUrl = textOf(packet.final_url);
  const contentDigest = textOf(packet.content_digest);
  const provenance = objectOf(packet.provenance);
  const status = nonNegativeInteger(packet.status);
  const bytes = nonNegativeInteger(provenance.bytes);
  const truncated = typeof provenance.truncated === "boolean" ? provenance.truncated : undefined;
  const fetchedAt = textOf(provenance.fetched_at);
  const blockers: string[] = [];
  const check = (ok: boolean, message: string): void => {
    if (!ok) blockers.push(message);
  };
  check(textOf(packet.decision) === "ready", "decision is not ready");
  check(status !== undefined && status >= 200 && status <= 299, "status is not 2xx");
  check(isHttpUrl(finalUrl), "final_url is not http(s)");
  check(isLowerSha256(contentDigest), "content_digest is not sha256");
  check(extracted !== "", "extracted text is missing");
  if (extracted.length > maxCharacters) {
    blockers.push(`extracted text exceeds ${maxCharacters} characters`);
  }
  check(fetchedAt !== "", "provenance.fetched_at is missing");
  check(bytes !== undefined, "provenance.bytes is invalid");
  check(truncated !== undefined, "provenance.truncated is missing");
  if (blockers.length > 0) return { ok: false, blockers };
  return {
    ok: true,
    source: {
      source_digest: sha256Prefixed(extracted),
      content_digest: contentDigest,
      source_ref: finalUrl,
      source_kind: "fetch",
      extracted,
      provenance: {
        observed_at: fetchedAt,
        bytes: bytes ?? 0,
        truncated: truncated ?? false,
        status: status ?? 0,
        redirects: Array.isArray(provenance.redirects) ? provenance.redirects : [],
      },
    },
  };
}

function fromLocalFile(
  packet: JsonRecord,
  observedAt: string,
  maxCharacters: number,
): { ok: true; source: IndexedSource } | { ok: false; blockers: string[] } {
  // File contents are digested as read (not trimmed): the digest must match fs.read's.
  const extracted = typeof packet.contents === "string" ? packet.contents : "";
  const path = textOf(packet.path);
  const contentDigest = textOf(packet.content_digest);
  const bytes = nonNegativeInteger(packet.bytes);
  const blockers: string[] = [];
  const check = (ok: boolean, message: string): void => {
    if (!ok) blockers.push(message);
  };
  check(path !== "", "path is missing");
  check(isLowerSha256(contentDigest), "content_digest is not sha256");
  check(extracted !== "", "contents text is missing");
  check(bytes !== undefined, "bytes is invalid");
  check(packet.truncated === false, "local file read is truncated");
  check(observedAt.trim() !== "", "runtime observation time is missing");
  if (extracted.length > maxCharacters) {
    blockers.push(`contents text exceeds ${maxCharacters} characters`);
  }
  check(sha256Prefixed(extracted) === contentDigest, "content_digest does not match contents");
  if (blockers.length > 0) return { ok: false, blockers };
  return {
    ok: true,
    source: {
      source_digest: sha256Prefixed(extracted),
      content_digest: contentDigest,
      source_ref: `file:${path}`,
      source_kind: "local_file",
      extracted,
      provenance: { observed_at: observedAt, bytes: bytes ?? 0, truncated: false, path },
    },
  };
}

/** The source as the index lists it. */
export function sourceJson(source: IndexedSource): JsonRecord {
  return { ...source, provenance: { ...source.provenance } };
}

/** What the index digest commits for one source: its fields, the text replaced by its digest. */
export function indexMaterial(source: IndexedSource): JsonRecord {
  const { extracted, ...rest } = sourceJson(source);
  return { ...rest, extracted_digest: sha256Prefixed(extracted as string) };
}

/** The source as evidence a claim may cite (no text). */
export function evidenceJson(source: IndexedSource): JsonRecord {
  return {
    evidence_digest: source.source_digest,
    content_digest: source.content_digest,
    source_ref: source.source_ref,
    source_kind: source.source_kind,
    provenance: { ...source.provenance },
  };
}
