#!/usr/bin/env node
/**
 * `npm start`: builds the runtime, the API and the console, then serves the operator API and
 * the console (Next.js, production) over the repository as the workspace — the bundled skills
 * in ./skills, the embedded SQLite store in ./.runx. Prints the console URL and, while no
 * operator exists, the one-time bootstrap URL for the first admin. Ctrl-C (SIGINT) or
 * SIGTERM stops both children and exits.
 *
 * Env: RUNX_CONSOLE_PORT (3000), RUNX_API_PORT (4100), RUNX_API_SESSION_SECRET (random per
 * start when unset: sessions end when the API restarts), RUNX_HOME.
 */
import { spawnSync } from "node:child_process";
import { buildWeb, webAppExists } from "./build-web.mjs";
import { ROOT, ensureApiBuilt, startApi, startWeb, stopService } from "./console-services.mjs";

const say = (line) => process.stdout.write(`${line}\n`);
const fail = (message) => {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(1);
};

function port(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535) fail(`${name} must be a port number`);
  return value;
}

const consolePort = port("RUNX_CONSOLE_PORT", 3000);
const apiPort = port("RUNX_API_PORT", 4100);
const consoleUrl = `http://127.0.0.1:${consolePort}`;

const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
if (build.status !== 0) fail("npm run build failed");
const withConsole = webAppExists();
try {
  ensureApiBuilt(say);
  if (withConsole) buildWeb({ log: say });
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const children = [];
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  say("\nstopping the console and the API ...");
  for (const child of [...children].reverse()) await stopService(child);
  process.exit(code);
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

const env = {
  ...process.env,
  RUNX_WORKSPACE: ROOT,
  RUNX_API_PORT: String(apiPort),
  RUNX_API_HOST: "127.0.0.1",
  RUNX_API_ORIGINS: `${consoleUrl},http://localhost:${consolePort}`,
};
const echo = (prefix) => (line) => say(`${prefix} ${line}`);
try {
  const api = await startApi({ env, onLine: echo("[api]") });
  children.push(api.child);
  api.child.once("exit", (code) => {
    if (!stopping) {
      process.stderr.write(`npm start: the API exited (${code}); stopping\n`);
      void stop(1);
    }
  });
  if (withConsole) {
    const web = await startWeb({
      port: consolePort,
      apiUrl: api.apiUrl,
      env: process.env,
      onLine: echo("[console]"),
    });
    children.push(web.child);
    web.child.once("exit", (code) => {
      if (!stopping) {
        process.stderr.write(`npm start: the console exited (${code}); stopping\n`);
        void stop(1);
      }
    });
  }
  say("");
  if (withConsole) say(`runx console: ${consoleUrl}`);
  else say("apps/web has no console yet: serving the API only");
  say(`runx api: ${api.apiUrl}/trpc (workspace ${ROOT})`);
  if (api.bootstrapUrl !== null) {
    say(`runx bootstrap: ${api.bootstrapUrl}`);
    say(
      "  (one-time: open it to create the first admin; or `runx operator add <name> --role admin`)",
    );
  }
  say("Ctrl-C stops both.");
} catch (error) {
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  await stop(1);
}
