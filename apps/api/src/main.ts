/** `npm start -w @runx/api`: env → createRuntime() → worker pool → HTTP. */
import { createRuntime } from "@runx/runtime";
import { readEnv } from "./env.js";
import { ApiEvents } from "./events.js";
import { createApiServer } from "./server.js";
import { sessionKeys } from "./session.js";
import { WorkerPool } from "./worker-pool.js";

const env = readEnv();
const options = { workspaceRoot: env.workspaceRoot, runxHome: env.runxHome, env: env.runtimeEnv };
const runtime = createRuntime(options);
const events = new ApiEvents();
const executor = new WorkerPool({ size: env.workers, runtime: options, events });
const server = createApiServer({
  runtime,
  sessions: sessionKeys(env.sessionSecret),
  executor,
  events,
  allowedOrigins: env.allowedOrigins,
  secureCookies: env.secureCookies,
});
server.listen(env.port, env.host, () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : env.port;
  const base = `http://${env.host}:${port}`;
  process.stdout.write(`runx api listening on ${base}/trpc\n`);
  const token = runtime.console.operators.bootstrapToken();
  if (token !== null) {
    process.stdout.write(
      `no operator exists yet: create the first admin within this process's lifetime with\n` +
        `  auth.bootstrap {token: "${token}", username, password}\n` +
        `  (console: ${env.allowedOrigins[0] ?? base}/bootstrap?token=${token})\n`,
    );
  }
});
const stop = () => {
  server.close();
  void executor.close().finally(() => {
    runtime.close();
    process.exit(0);
  });
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
