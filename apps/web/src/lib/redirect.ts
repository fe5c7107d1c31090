/**
 * Where the console may send a visitor after sign-in (`/login?next=…`): a path on its own
 * origin, never anywhere else. A prefix check is not enough: browsers drop tab, CR and LF
 * anywhere in a URL (`/\t/evil.test` is `//evil.test`), read `\` as `/`, and resolve
 * `/..//evil.test` to the path `//evil.test`, which is itself protocol-relative when
 * followed. So the target is parsed the way the browser will parse it, against the
 * console's origin, and only its path, query and hash are kept, and only when they stay
 * on that origin when followed again.
 */

/** A stand-in origin for checks on the server, where only the path matters. */
export const PATH_BASE = "http://console.invalid";

/** Where a refused or missing target goes. */
export const DEFAULT_NEXT = "/";

/** Control characters (C0, DEL, C1): the URL parser strips some, nothing needs any. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A same-origin path (`/a?b#c`) for `next`, or `/`. `origin` is the console's origin
 * (`window.location.origin` in the browser).
 */
export function safeNext(next: string | null | undefined, origin: string): string {
  if (typeof next !== "string" || next.length > 2048) return DEFAULT_NEXT;
  const text = next.replace(CONTROL, "");
  // Only an absolute path: no scheme (`javascript:`, `https:`), no bare relative path.
  if (!text.startsWith("/")) return DEFAULT_NEXT;
  let base: URL;
  let url: URL;
  try {
    base = new URL(origin);
    url = new URL(text, base);
  } catch {
    return DEFAULT_NEXT;
  }
  if (url.origin !== base.origin || url.username !== "" || url.password !== "") {
    return DEFAULT_NEXT;
  }
  const target = `${url.pathname}${url.search}${url.hash}`;
  // `//x` and `/\x` after normalisation would leave the origin when followed.
  if (!target.startsWith("/") || target.startsWith("//") || target.startsWith("/\\")) {
    return DEFAULT_NEXT;
  }
  // Following the result must land on the same origin and the same path.
  const again = new URL(target, base);
  if (again.origin !== base.origin || `${again.pathname}${again.search}${again.hash}` !== target) {
    return DEFAULT_NEXT;
  }
  return target;
}

/** `/login?next=<path>` for coming back to `path` (itself made safe first). */
export function loginHref(path: string, origin: string): string {
  const next = safeNext(path, origin);
  return next === DEFAULT_NEXT ? "/login" : `/login?next=${encodeURIComponent(next)}`;
}
