/** Small pure formatting helpers shared by pages. */

/** Pretty JSON for a <pre> (never HTML). */
export function prettyJson(value: unknown): string {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? typeof value;
  } catch {
    return "[unserialisable value]";
  }
}

/** A short digest for tables: `sha256:abcd…wxyz`. */
export function shortDigest(digest: string | null | undefined, keep = 10): string {
  if (!digest) return "—";
  const [algo, hex] = digest.includes(":") ? digest.split(":", 2) : ["", digest];
  const body = hex ?? "";
  const short = body.length > keep + 4 ? `${body.slice(0, keep)}…${body.slice(-4)}` : body;
  return algo ? `${algo}:${short}` : short;
}

/** An ISO time in a compact, locale-independent form (UTC). */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** Milliseconds between two ISO times, rendered short ("1.2 s"), or "—". */
export function duration(from: string | null, to: string | null): string {
  if (!from || !to) return "—";
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Builds a query string from defined, non-empty values. */
export function queryString(params: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** First value of a Next search param. */
export function param(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
