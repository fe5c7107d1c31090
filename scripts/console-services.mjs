/* global fetch */
/**
 * Starting the operator API and the console as child processes — shared by `npm start`
 * (scripts/start.mjs) and the e2e harness (e2e/harness/), so both run exactly the same
 * commands. The API is `apps/api/dist/main.js` when built, else `apps/api/src/main.ts` under
 * tsx; the console is `next start` in apps/web (production build).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.isFile()) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build -w @runx/api` when apps/api has a build script and its dist is stale. */
export function ensureApiBuilt(log = () => {}) {
  const pkg = JSON.parse(readFileSync(join(ROOT, "apps", "api", "package.json"), "utf8"));
  if (pkg.scripts?.build === undefined) return "no-build-script";
  const main = join(ROOT, "apps", "api", "dist", "main.js");
  if (existsSync(main) && statSync(main).mtimeMs >= newestMtime(join(ROOT, "apps", "api", "src"))) {
    return "fresh";
  }
  log("building the API (npm run build -w @runx/api) ...");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["run", "build", "-w", "@runx/api"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error(`the API build failed (exit ${result.status})`);
  return "built";
}

/** The command line that starts the API. */
export function apiCommand() {
  const dist = join(ROOT, "apps", "api", "dist", "main.js");
  if (existsSync(dist)) return [process.execPath, [dist]];
  return [process.execPath, ["--import", "tsx", join(ROOT, "apps", "api", "src", "main.ts")]];
}

/**
 * `count` distinct free TCP ports on 127.0.0.1. The listeners stay open until all are bound:
 * asking for one port at a time can return the same port twice (the first was released before
 * the second was asked for), and two services then collide on it.
 */
export async function freePorts(count) {
  const servers = [];
  try {
    const ports = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      server.unref();
      servers.push(server);
      ports.push(
        await new Promise((resolve, reject) => {
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server.address().port));
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

const LISTENING = /runx api listening on (http:\/\/\S+)/;
const BOOTSTRAP = /(https?:\/\/\S+\/bootstrap\?token=[^\s)"']+)/;

function lines(stream, onLine) {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
}

function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/**
 * Spawns a service in its own process group (so a terminal's Ctrl-C reaches only the
 * parent, which forwards it once) and streams its output lines to `onLine`.
 */
function spawnService(name, command, args, { cwd, env, onLine }) {
  const child = spawn(command, args, {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail = [];
  const record = (stream) => (line) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    onLine?.(line, stream);
  };
  lines(child.stdout, record("stdout"));
  lines(child.stderr, record("stderr"));
  const failure = new Promise((_, reject) => {
    child.once("error", (error) => reject(new Error(`${name} could not start: ${error.message}`)));
    child.once("exit", (code, signal) =>
      reject(
        new Error(
          `${name} exited (${code ?? signal}) before it was ready; last output:\n${tail.join("\n")}`,
        ),
      ),
    );
  });
  failure.catch(() => {});
  return { child, failure, tail };
}

async function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} was not ready within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the API. Resolves once it listens, with its base URL (without /trpc) and — when no
 * operator exists yet — the one-time bootstrap URL it printed.
 */
export async function startApi({ env, onLine, timeoutMs = 60_000 }) {
  const [command, args] = apiCommand();
  let apiUrl = null;
  let bootstrapUrl = null;
  let listening;
  const heard = new Promise((resolve) => (listening = resolve));
  const service = spawnService("the API", command, args, {
    cwd: ROOT,
    env,
    onLine(line, stream) {
      const l = LISTENING.exec(line);
      if (l !== null) {
        apiUrl = l[1].replace(/\/trpc\/?$/, "").replace(/\/$/, "");
        listening();
      }
      const b = BOOTSTRAP.exec(line);
      if (b !== null) bootstrapUrl = b[1];
      onLine?.(line, stream);
    },
  });
  await within(timeoutMs, "the API", Promise.race([heard, service.failure]));
  // The bootstrap line follows the listening line when no operator exists: ask the API.
  const status = await fetch(`${apiUrl}/trpc/auth.status`).then((r) => r.json());
  if (status?.result?.data?.bootstrapRequired === true) {
    const deadline = Date.now() + 5_000;
    while (bootstrapUrl === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    if (bootstrapUrl === null)
      throw new Error("the API needs a bootstrap but printed no bootstrap URL");
  }
  return { child: service.child, apiUrl, bootstrapUrl, tail: service.tail };
}

/** Starts `next start` for apps/web; resolves once it answers HTTP. */
export async function startWeb({ port, apiUrl, env, onLine, timeoutMs = 90_000 }) {
  const next = join(ROOT, "node_modules", "next", "dist", "bin", "next");
  const service = spawnService(
    "the console",
    process.execPath,
    [next, "start", "-p", String(port), "-H", "127.0.0.1"],
    {
      cwd: join(ROOT, "apps", "web"),
      env: { ...env, RUNX_API_URL: apiUrl, NEXT_TELEMETRY_DISABLED: "1", PORT: String(port) },
      onLine,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const up = (async () => {
    for (;;) {
      try {
        const res = await fetch(`${url}/login`, { redirect: "manual" });
        if (res.status < 500) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await within(timeoutMs, "the console", Promise.race([up, service.failure]));
  return { child: service.child, url, tail: service.tail };
}

/** Stops a service started here: SIGTERM to its process group, SIGKILL after `graceMs`. */
export async function stopService(child, graceMs = 5_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const signal = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), graceMs);
  await exited(child);
  clearTimeout(timer);
}
