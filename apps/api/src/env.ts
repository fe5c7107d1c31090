/** The API's environment (the only file of apps/api that reads process.env). */
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { resolve } from "node:path";

/** Parsed settings. */
export interface ApiEnv {
  workspaceRoot: string;
  runxHome: string;
  port: number;
  host: string;
  allowedOrigins: string[];
  secureCookies: boolean;
  sessionSecret: Uint8Array;
  workers: number;
  /** Proxies whose X-Forwarded-For names the client (./client-address.ts). */
  trustedProxies: string[];
  runtimeEnv: Record<string, string | undefined>;
}

/** Reads RUNX_API_* settings; errors name the variable. */
export function readEnv(env: NodeJS.ProcessEnv = process.env): ApiEnv {
  const port = Number(env.RUNX_API_PORT ?? "4100");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error("RUNX_API_PORT must be a port number (0-65535)");
  }
  const secret = env.RUNX_API_SESSION_SECRET;
  if (secret !== undefined && Buffer.byteLength(secret) < 32) {
    throw new Error("RUNX_API_SESSION_SECRET must be at least 32 bytes");
  }
  // On a shared database every instance must sign, and accept, the same session cookies: a
  // secret each process picked for itself would sign a user out whenever the balancer
  // switched instances.
  if (secret === undefined && (env.RUNX_STATE_URL ?? "").trim() !== "") {
    throw new Error(
      "RUNX_API_SESSION_SECRET is required with RUNX_STATE_URL (at least 32 bytes, the same on every instance)",
    );
  }
  const workers = Number(env.RUNX_API_WORKERS ?? "2");
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    throw new Error("RUNX_API_WORKERS must be an integer from 1 to 64");
  }
  return {
    workspaceRoot: resolve(env.RUNX_WORKSPACE ?? process.cwd()),
    runxHome: resolve(env.RUNX_HOME ?? `${env.HOME ?? "."}/.runx`),
    port,
    host: env.RUNX_API_HOST ?? "127.0.0.1",
    allowedOrigins: (env.RUNX_API_ORIGINS ?? "http://localhost:3000,http://127.0.0.1:3000")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    secureCookies: env.RUNX_API_SECURE_COOKIES === "1",
    // Without a configured secret, sessions last as long as the process.
    sessionSecret: secret !== undefined ? Buffer.from(secret) : randomBytes(32),
    workers,
    trustedProxies: readTrustedProxies(env.RUNX_API_TRUSTED_PROXIES),
    runtimeEnv: { ...env },
  };
}

/**
 * RUNX_API_TRUSTED_PROXIES: the addresses whose X-Forwarded-For is believed. Loopback by
 * default, where `npm start` runs the console that forwards every browser's call; empty
 * trusts no proxy.
 */
function readTrustedProxies(value: string | undefined): string[] {
  const addresses = (value ?? "127.0.0.1,::1,::ffff:127.0.0.1")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const address of addresses) {
    if (isIP(address) === 0) {
      throw new Error(
        `RUNX_API_TRUSTED_PROXIES must be comma-separated IP addresses; ${JSON.stringify(address)} is not one`,
      );
    }
  }
  return addresses;
}
