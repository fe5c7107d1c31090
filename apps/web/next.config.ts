import type { NextConfig } from "next";
import { fileURLToPath } from "node:url";
import { MAX_TRPC_BODY_BYTES, STATIC_HEADERS } from "./src/lib/security-headers";

/**
 * Where the console proxies `/trpc/*` (the API). Next fixes rewrites at build time, so
 * src/proxy.ts repeats this rewrite with the value read at request time (which wins).
 */
const apiUrl = (process.env.RUNX_API_URL ?? "http://127.0.0.1:4100").replace(/\/+$/, "");

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  turbopack: { root: fileURLToPath(new URL("../..", import.meta.url)) },
  experimental: {
    // What Next buffers of a request body the proxy sees (src/proxy.ts answers 413 above
    // this, so the buffer never holds more than one capped body per request).
    proxyClientMaxBodySize: MAX_TRPC_BODY_BYTES,
  },
  headers() {
    // Every response, pages and static files alike; the pages' CSP comes from src/proxy.ts.
    return Promise.resolve([{ source: "/:path*", headers: [...STATIC_HEADERS] }]);
  },
  rewrites() {
    return Promise.resolve([{ source: "/trpc/:path*", destination: `${apiUrl}/trpc/:path*` }]);
  },
};

export default config;
