/**
 * The console's response headers against framing, sniffing, leaking and injected script.
 * The static ones go on every response (next.config.ts `headers()`), the Content Security
 * Policy on every page from the proxy (src/proxy.ts), because its script nonce is fresh per
 * request: Next reads the nonce from the request's CSP header and puts it on the scripts it
 * renders (node_modules/next/dist/docs/01-app/02-guides/content-security-policy.md).
 */

/** Headers every console response carries. */
export const STATIC_HEADERS: readonly { key: string; value: string }[] = [
  // Never framed (older browsers; CSP frame-ancestors below is the modern form).
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  // Run ids and receipt ids in URLs stay on the console.
  { key: "Referrer-Policy", value: "no-referrer" },
  // No other window keeps a handle on the console (window.opener).
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  {
    key: "Permissions-Policy",
    value: "camera=(), microphone=(), geolocation=(), payment=(), usb=(), display-capture=()",
  },
];

/** A fresh nonce (128 random bits, base64). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The pages' policy. Scripts: this response's nonce (Next's inline bootstrap and chunks it
 * renders) and the console's own files (chunks loaded later); never inline code without the
 * nonce, never eval. The ELK layout runs in a worker from the console's files
 * (lib/layout.ts); tRPC and its server-sent events go to the same origin (the /trpc proxy).
 * Inline style attributes are refused too (nonces do not apply to them): the console styles
 * with classes.
 */
export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The largest request body the console accepts (only `/trpc` takes one, and forwards it);
 * larger ones get 413 in the proxy. 4 MiB is
 * the API's largest per-procedure cap (`runs.start` and `runs.answer` carry skill data,
 * apps/api/src/limits.ts), which applies its smaller caps to every other procedure behind it.
 */
export const MAX_TRPC_BODY_BYTES = 4 * 1024 * 1024;
