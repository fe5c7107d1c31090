/**
 * Runs `store-child.ts` in real separate Node processes. The child is bundled with esbuild
 * the way the CLI is (bare imports external) into a temporary folder below this package's
 * `node_modules/.cache`, so it resolves better-sqlite3 normally and finds the migrations
 * folder by walking up from a bundled file, as `dist/*.js` does.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, "..", "..", "..");

/** A bundled child entry and how to remove it. */
export interface BundledChild {
  file: string;
  dispose(): void;
}

/** Bundles the child entry into `packages/runtime/node_modules/.cache/store-child-*`. */
export function bundleStoreChild(): BundledChild {
  const cache = join(packageRoot, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, "store-child-"));
  const file = join(dir, "store-child.mjs");
  buildSync({
    entryPoints: [join(here, "store-child.ts")],
    outfile: file,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
  });
  return { file, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The final line a child prints. */
export interface ChildResult {
  ok: boolean;
  code?: string;
  message?: string;
  [key: string]: unknown;
}

/** A started child: `ready` resolves once it waits for the start gun, `fire()` releases it. */
export interface StoreChild {
  ready: Promise<void>;
  fire(): void;
  result: Promise<ChildResult>;
}

/** Starts `node <bundle> …args`; rejects `ready`/`result` after `deadlineMs`. */
export function startStoreChild(file: string, args: string[], deadlineMs = 20_000): StoreChild {
  const child = spawn(process.execPath, [file, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const result = new Promise<ChildResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`store child timed out; stderr: ${stderr}`));
    }, deadlineMs);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.startsWith("ready\n")) onReady();
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("close", () => {
      clearTimeout(timer);
      const last = stdout.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(last) as ChildResult);
      } catch {
        reject(new Error(`store child printed no result; stderr: ${stderr}`));
      }
    });
  });
  return {
    ready: Promise.race([ready, result.then(() => undefined)]),
    fire: () => child.stdin.end("go\n"),
    result,
  };
}

/** Starts one child per argument list, fires them together, and collects their results. */
export async function runTogether(file: string, argLists: string[][]): Promise<ChildResult[]> {
  const children = argLists.map((args) => startStoreChild(file, args));
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.fire();
  return Promise.all(children.map((c) => c.result));
}
