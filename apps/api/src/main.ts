/**
 * `node apps/api/dist/main.js` (or `node --import tsx apps/api/src/main.ts`): env →
 * createRuntime() → recovery of runs a previous process left running → worker pool → run
 * watcher → HTTP.
 */
import { createRuntime, reapRunCgroups } from "@runx/runtime";
import { readEnv } from "./env.js";
import { ApiEvents } from "./events.js";
import { watchRuns } from "./run-watcher.js";
import { createApiServer } from "./server.js";
import { sessionKeys } from "./session.js";
import { WorkerPool } from "./worker-pool.js";

const env = (() => {
  try {
    return readEnv();
  } catch (error) {
    // A bad setting is one line naming the variable (./env.ts), not a stack trace.
    process.stderr.write(`runx api: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const options = { workspaceRoot: env.workspaceRoot, runxHome: env.runxHome, env: env.runtimeEnv };
const runtime = await (async () => {
  try {
    const built = createRuntime(options);
    // A bad RUNX_STATE_URL or an unreachable database stops the start, in one line.
    await built.ready();
    return built;
  } catch (error) {
    process.stderr.write(`runx api: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const shared = runtime.stateBackend.kind === "postgres";
if (shared) {
  process.stdout.write(`runx api: state store ${runtime.stateBackend.label}\n`);
} else {
  // Runs a dead API process left `running` become resumable pauses (or fail with a reason).
  // The journal is this machine's files; on the shared store run state is not served yet.
  for (const outcome of await runtime.console.recovery.recover()) {
    process.stdout.write(
      `runx recover: ${outcome.runId} (${outcome.job}) ${outcome.action}: ${outcome.reason}\n`,
    );
  }
}
// Processes of runs a SIGKILLed API left behind (their run cgroups) die with their runs.
const reaped = reapRunCgroups();
if (reaped > 0)
  process.stdout.write(
    `runx recover: killed ${reaped} run process tree(s) left by a previous process\n`,
  );
const events = new ApiEvents();
const executor = new WorkerPool({
  size: env.workers,
  runtime: options,
  events,
  journal: runtime.console.recovery,
});
// The watcher polls the SQLite run table; the shared store does not hold run state yet.
const watcher = shared ? { stop: () => undefined } : watchRuns(runtime, events);
const server = createApiServer({
  runtime,
  sessions: sessionKeys(env.sessionSecret),
  executor,
  events,
  allowedOrigins: env.allowedOrigins,
  secureCookies: env.secureCookies,
  trustedProxies: env.trustedProxies,
  log: (line) => process.stdout.write(`${line}\n`),
});
server.listen(env.port, env.host, () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : env.port;
  const base = `http://${env.host}:${port}`;
  process.stdout.write(`runx api listening on ${base}\n`);
  runtime.console.operators.bootstrapToken().then(
    (token) => {
      if (token === null) return;
      // The console origin is the first allowed origin; the token is also accepted by
      // auth.bootstrap {token, username, password} directly.
      process.stdout.write(
        `runx bootstrap: ${env.allowedOrigins[0] ?? base}/bootstrap?token=${token}\n`,
      );
    },
    (error: unknown) => {
      process.stderr.write(`runx api: bootstrap token: ${(error as Error).message}\n`);
    },
  );
});
const stop = () => {
  watcher.stop();
  server.close();
  void executor.close().finally(() => {
    // Whatever a worker could not kill before it was terminated goes with the API.
    reapRunCgroups(process.pid);
    runtime.close();
    process.exit(0);
  });
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
