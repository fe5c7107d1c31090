import type { NextConfig } from "next";
import { fileURLToPath } from "node:url";

/**
 * Where the console proxies `/trpc/*` (the API). Next fixes rewrites at build time, so
 * src/proxy.ts repeats this rewrite with the value read at request time (which wins).
 */
const apiUrl = (process.env.RUNX_API_URL ?? "http://127.0.0.1:4100").replace(/\/+$/, "");

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  turbopack: { root: fileURLToPath(new URL("../..", import.meta.url)) },
  rewrites() {
    return Promise.resolve([{ source: "/trpc/:path*", destination: `${apiUrl}/trpc/:path*` }]);
  },
};

export default config;
