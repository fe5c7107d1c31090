#!/usr/bin/env node
/**
 * Builds the console (apps/web) with `next build` unless its last build is up to date: the
 * build stamp records a fingerprint (path, size, mtime) of every source file of apps/web and
 * of apps/api/src (the console imports the API's router types), and a build runs only when
 * that fingerprint changed or `.next/BUILD_ID` is missing. Used by `npm start` and the e2e
 * harness. Exits non-zero (with next's output) when the build fails.
 *
 *   node scripts/build-web.mjs [--force]
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const web = join(root, "apps", "web");
const stampFile = join(web, ".next", "runx-build-stamp.json");
const SKIP = new Set(["node_modules", ".next", "dist", ".turbo", "coverage"]);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (entry.isFile()) yield full;
  }
}

/** A digest over the console's and the API's source files (names, sizes, mtimes). */
export function webFingerprint() {
  const hash = createHash("sha256");
  for (const dir of [web, join(root, "apps", "api", "src")]) {
    if (!existsSync(dir)) continue;
    for (const file of [...files(dir)].sort()) {
      const st = statSync(file);
      hash.update(`${relative(root, file)}\0${st.size}\0${st.mtimeMs}\n`);
    }
  }
  return hash.digest("hex");
}

/** True when apps/web holds a Next.js app (an app/ or src/app/ directory). */
export function webAppExists() {
  return existsSync(join(web, "app")) || existsSync(join(web, "src", "app"));
}

/** Builds when stale; returns "built" or "fresh". Throws when there is no app or next fails. */
export function buildWeb({
  force = false,
  log = (line) => process.stdout.write(`${line}\n`),
} = {}) {
  if (!webAppExists()) {
    throw new Error(
      "apps/web has no Next.js app yet (no apps/web/app or apps/web/src/app): nothing to build",
    );
  }
  const fingerprint = webFingerprint();
  if (!force && existsSync(join(web, ".next", "BUILD_ID")) && existsSync(stampFile)) {
    try {
      if (JSON.parse(readFileSync(stampFile, "utf8")).fingerprint === fingerprint) return "fresh";
    } catch {
      // an unreadable stamp means rebuild
    }
  }
  log("building the console (next build in apps/web) ...");
  const next = join(root, "node_modules", "next", "dist", "bin", "next");
  const result = spawnSync(process.execPath, [next, "build"], {
    cwd: web,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) {
    throw new Error(`next build failed in apps/web (exit ${result.status ?? result.signal})`);
  }
  // Fingerprint after the build: next build itself may touch next-env.d.ts or tsconfig.json.
  const built = webFingerprint();
  writeFileSync(
    stampFile,
    `${JSON.stringify({ fingerprint: built, builtAt: new Date().toISOString() })}\n`,
  );
  return "built";
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const outcome = buildWeb({ force: process.argv.includes("--force") });
    if (outcome === "fresh") process.stdout.write("console build is up to date (apps/web/.next)\n");
  } catch (error) {
    process.stderr.write(`build-web: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
