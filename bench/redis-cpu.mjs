// Where a governed Redis append's client CPU goes (a diagnostic beside bench/data.mjs, no
// target). With fast Redis and 16 clients in one Node process both sides of bench/data.mjs are
// bound by this process's CPU, so its ratio is the CPU ratio measured here. In one process,
// rounds rotating, 16 clients each append N events per round through:
//   governed  data.append_event through the core on the Redis adapter (what bench/data.mjs runs);
//   adapter   the adapter's append with the request the core would build, built before the clock;
//   sent      the same EVALSHA sent the way the adapter sends its scripts (an ioredis Command
//             with flat string arguments, through sendCommand; bench/data.mjs's "sent");
//   raw       a bare EVALSHA of the adapter's script with the same arguments, called as
//             ioredis's `evalsha(...)` (bench/data.mjs's baseline).
// Printed per side: median process CPU (user + system) µs per event, the median of the
// per-round ratios to raw, and the user and system parts (system time is mostly the socket
// writes; on a small VM it grows when Redis has gone idle between commands and must be woken).
// The difference governed − adapter is the core's work (input contract, canonical JSON,
// digests, envelope); adapter − sent is the adapter's (chain value, arguments, reply); sent −
// raw is what ioredis's generated command method costs on top of sending the command.
//
// Usage: node bench/redis-cpu.mjs [--events N] [--rounds R] [--clients C]
// Redis on loopback: RUNX_TEST_REDIS_URL (default redis://127.0.0.1:6379/0); a scratch key
// prefix is used and removed.
import {
  RESOURCE,
  SOURCE,
  TYPE,
  appendInput,
  bareRedisAppend,
  loadDataCore,
  median,
  now,
  prepareStream,
  sentRedisAppend,
  sha256Implementation,
  stamped,
} from "./data-kit.mjs";

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(name);
  return Number(i >= 0 ? argv[i + 1] : fallback);
};
const EVENTS = arg("--events", 1000);
const ROUNDS = arg("--rounds", 13);
const CLIENTS = arg("--clients", 16);
for (const [name, value] of [
  ["--events", EVENTS],
  ["--rounds", ROUNDS],
  ["--clients", CLIENTS],
]) {
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`${name} must be a positive integer`);
    process.exit(2);
  }
}

const data = await loadDataCore();
const { Command, Redis } = await import("ioredis");

/** The adapter request the core builds for a prepared row (its commit time stamped now). */
function appendRequest(aggregate, row) {
  const date = now();
  const at = date.toISOString();
  return {
    stream: { source: SOURCE, resource: RESOURCE, aggregateId: aggregate },
    expectedVersion: row.version - 1,
    idempotencyKey: `k${row.version}`,
    eventJson: row.eventJson,
    recordJson: stamped(row, at),
    record: {
      event_ref: row.eventRef,
      version: row.version,
      event_type: TYPE,
      event: row.event,
      event_digest: row.eventDigest,
      idempotency_key: `k${row.version}`,
      committed_at: at,
    },
    committedAtMs: date.getTime(),
  };
}

const scratch = data.scratchRedisPrefix();
const adapters = await Promise.all(
  Array.from({ length: CLIENTS }, () =>
    data.openRedisAdapter({ endpoint: data.REDIS_URL, keyPrefix: scratch.prefix }),
  ),
);
const conns = Array.from({ length: CLIENTS }, () => new Redis(data.REDIS_URL));
try {
  const sha = await conns[0].script("LOAD", data.REDIS_APPEND_SCRIPT);
  // A bare client's inputs: the stream's keys and its prepared rows.
  const bareRows = (aggregate) => ({
    aggregate,
    keys: data.redisStreamKeys(scratch.prefix, {
      source: SOURCE,
      resource: RESOURCE,
      aggregateId: aggregate,
    }),
    rows: prepareStream(data, aggregate, EVENTS),
  });
  const sides = {
    governed: {
      prepare: (aggregate) => Array.from({ length: EVENTS }, (_, i) => appendInput(aggregate, i)),
      run: async (c, inputs) => {
        for (const input of inputs) {
          const r = await data.runOnAdapter(adapters[c], "append_event", input, { now });
          if (r.status !== "committed") throw new Error(`governed append: ${r.status}`);
        }
      },
    },
    adapter: {
      prepare: (aggregate) =>
        prepareStream(data, aggregate, EVENTS).map((row) => appendRequest(aggregate, row)),
      run: async (c, requests) => {
        for (const request of requests) {
          const r = await adapters[c].append(request);
          if (r.kind !== "committed") throw new Error(`adapter append: ${r.kind}`);
        }
      },
    },
    sent: {
      prepare: bareRows,
      run: async (c, { aggregate, keys, rows }) => {
        for (const row of rows) {
          await sentRedisAppend(data, Command, conns[c], sha, keys, aggregate, row);
        }
      },
    },
    raw: {
      prepare: bareRows,
      run: async (c, { aggregate, keys, rows }) => {
        for (const row of rows) await bareRedisAppend(data, conns[c], sha, keys, aggregate, row);
      },
    },
  };
  const names = Object.keys(sides);
  const cpu = Object.fromEntries(names.map((name) => [name, []]));
  const split = Object.fromEntries(names.map((name) => [name, { user: [], system: [] }]));
  // Round 0 warms up (JIT, connections) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      const side = sides[name];
      const inputs = Array.from({ length: CLIENTS }, (_, c) =>
        side.prepare(`${name}-r${round}-${c}`),
      );
      const before = process.cpuUsage();
      await Promise.all(inputs.map((input, c) => side.run(c, input)));
      const used = process.cpuUsage(before);
      if (round > 0) {
        cpu[name].push((used.user + used.system) / (CLIENTS * EVENTS));
        split[name].user.push(used.user / (CLIENTS * EVENTS));
        split[name].system.push(used.system / (CLIENTS * EVENTS));
      }
    }
  }
  console.log(
    `redis append client CPU: ${CLIENTS} clients × ${EVENTS} events per round, ${ROUNDS} rounds (medians); SHA-256 of short strings: ${sha256Implementation(data)}`,
  );
  for (const name of names) {
    const ratio = median(cpu[name].map((x, i) => x / cpu.raw[i]));
    const user = median(split[name].user).toFixed(2).padStart(6);
    const system = median(split[name].system).toFixed(2).padStart(6);
    console.log(
      `${name.padEnd(9)} ${median(cpu[name]).toFixed(2).padStart(6)} µs/event  ${ratio.toFixed(3)}× raw  (user ${user}, system ${system})`,
    );
  }
} finally {
  await Promise.all(adapters.map((a) => a.close()));
  await Promise.all(conns.map((c) => c.quit()));
  await scratch.drop();
}
