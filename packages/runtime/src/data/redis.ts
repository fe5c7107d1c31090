/**
 * Redis event store (`data.redis`, driver `ioredis`). Every key of a stream and of its
 * resource's head index sits under one key prefix with exactly one `{hash tag}`, so an append
 * touches one cluster slot. One Lua script per append reads the length, the stored head and
 * the idempotency entry, checks the version, and refuses to write unless the head digest the
 * new chain value was computed from is the one stored now (the chain can never skip a link);
 * it then pushes the event and advances head and index together. Reads are single scripts too
 * (one snapshot); the scripts are in `redis-scripts.ts`. No key ever gets a TTL.
 *
 * Keys (S = H(stream identity), R = H(source, resource), every key declared to its script):
 *   <prefix>:stream:<S>                  list: record JSON in version order (LLEN = version)
 *   <prefix>:idempotency:<S>             hash: key -> "<event digest>|<version>"
 *   <prefix>:resource:<R>:heads-index-v2 zset (scores 0): "<17-digit inverted ms>|<aggregate>"
 *   <prefix>:resource:<R>:heads-v2       hash: aggregate -> "<version>|<chain digest>|<index
 *                                        member>|<latest record JSON>"
 * One heads-hash field is the stream's head (version and chain value, checked against LLEN on
 * every append and read) and its row in the heads listing, so an append writes it once.
 * A store written with the v1 layout (separate head string) is refused as a legacy projection.
 */
import { createHash, randomBytes } from "node:crypto";
import { Command, Redis } from "ioredis";
import { sha256Hex } from "../crypto/sha256.js";
import { canonicalJson, hashCanonical } from "../receipts/canonical.js";
import type { AppendOutcome, AppendRequest, DataAdapter, HeadsQuery } from "./adapter.js";
import { DataStop, EMPTY_PROJECTION_DIGEST, chainDigest, chainDigestOfOwn } from "./model.js";
import type { EventRecord, HeadRecord, StreamHead, StreamKey } from "./model.js";
import { REDIS_APPEND_SCRIPT, REDIS_HEADS_SCRIPT, REDIS_READ_SCRIPT } from "./redis-scripts.js";

/** The append script, for the data bench that runs it bare. */
export { REDIS_APPEND_SCRIPT };

const INVERT_BASE = 8_640_000_000_000_000;

/**
 * Index member of a head committed at `committedAtMs` (epoch ms): the 17-digit inverted time,
 * then the aggregate (lexicographic = newest first).
 */
export function headMemberAt(committedAtMs: number, aggregateId: string): string {
  return `${String(INVERT_BASE - committedAtMs).padStart(17, "0")}|${aggregateId}`;
}

/** `headMemberAt` of a commit time written as text (a stored record's, a cursor's). */
export const headMember = (committedAt: string, aggregateId: string): string =>
  headMemberAt(Date.parse(committedAt), aggregateId);

/** A stream's keys under `prefix` (stream list, idempotency hash, heads index, heads hash). */
export function redisStreamKeys(prefix: string, stream: StreamKey): string[] {
  return keysOf(prefix, streamHash(stream), resourceHash(stream.source, stream.resource));
}

const streamHash = (stream: StreamKey) =>
  sha256Hex(
    canonicalJson({
      aggregate_id: stream.aggregateId,
      data_source_ref: stream.source,
      resource: stream.resource,
    }),
  );
const resourceHash = (source: string, resource: string) =>
  sha256Hex(canonicalJson({ data_source_ref: source, resource }));
const headsKeys = (prefix: string, r: string): [string, string] => [
  `${prefix}:resource:${r}:heads-index-v2`,
  `${prefix}:resource:${r}:heads-v2`,
];
const keysOf = (prefix: string, s: string, r: string): string[] => [
  `${prefix}:stream:${s}`,
  `${prefix}:idempotency:${s}`,
  ...headsKeys(prefix, r),
];

/**
 * The EVALSHA arguments of one append (key count, keys, then ARGV, as the strings sent) for
 * `previous` -> `next`, in the order REDIS_APPEND_SCRIPT reads them.
 */
export function redisAppendArgs(
  keys: readonly string[],
  req: AppendRequest,
  previous: string,
  next: string,
): string[] {
  const r = req.record;
  return [
    "4",
    keys[0] as string,
    keys[1] as string,
    keys[2] as string,
    keys[3] as string,
    String(req.expectedVersion),
    req.idempotencyKey,
    r.event_digest,
    req.recordJson,
    previous,
    next,
    headMemberAt(req.committedAtMs, req.stream.aggregateId),
    req.stream.aggregateId,
  ];
}

/** A stream's keys and digest, and the head this connection last saw of it. */
interface StreamEntry {
  keys: string[];
  digest: string;
  head: { version: number; digest: string; own: boolean } | undefined;
}

/** Entries of an adapter's stream and resource caches before they start over. */
const MAX_CACHED = 10_000;

export interface RedisAdapterOptions {
  endpoint: string;
  keyPrefix: string;
  connectTimeoutMs?: number;
}

/** True for the error a server without the script (restart, SCRIPT FLUSH) answers EVALSHA with. */
const isNoScript = (error: unknown): boolean =>
  String((error as Error | undefined)?.message).startsWith("NOSCRIPT");

/** A Lua script called by SHA (see `scripted`). `args`: the key count, the keys, then ARGV. */
interface Script<T> {
  /** EVALSHA; rejects with NOSCRIPT when the server does not hold the script. */
  call(args: readonly string[]): Promise<T>;
  /** After `call` failed with `error`: loads the script and calls again on NOSCRIPT, else rethrows. */
  retry(error: unknown, args: readonly string[]): Promise<T>;
  /** `call`, then `retry` when it fails. */
  run(args: readonly string[]): Promise<T>;
}

/** Constructs EVALSHA commands whose arguments are set afterwards (see `scripted`). */
const NO_ARGS: string[] = [];

/**
 * A Lua script called by SHA; a server without it (restart, SCRIPT FLUSH) gets it loaded once.
 * The append path awaits `call` inside its own try and `retry`s from its catch, rather than
 * awaiting `run`, whose chained handler costs every append a promise and a microtask.
 *
 * EVALSHA goes out as an ioredis Command handed to `sendCommand` (both public API), its
 * arguments set as the flat array of strings the callers build. The generated
 * `redis.evalsha(...)` would, on every call, copy its arguments into a rest array, build an
 * options object, check for auto-pipelining (never on for these connections), then flatten and
 * convert the arguments again (`Array#flat` alone is about 1 µs for an append's 14 arguments
 * on Node 20): 5-6% of a governed append's client CPU with 16 writers in one process. (No
 * argument transformer applies to EVALSHA, so setting the arguments afterwards skips none.)
 */
function scripted<T>(redis: Redis, lua: string): Script<T> {
  const sha = createHash("sha1").update(lua).digest("hex");
  const call = (args: readonly string[]): Promise<T> => {
    const command = new Command("evalsha", NO_ARGS, { replyEncoding: "utf8" });
    command.args = [sha].concat(args);
    void redis.sendCommand(command);
    return command.promise as Promise<T>;
  };
  const retry = async (error: unknown, args: readonly string[]): Promise<T> => {
    if (!isNoScript(error)) throw error;
    await redis.script("LOAD", lua);
    return call(args);
  };
  return { call, retry, run: (args) => call(args).catch((error: unknown) => retry(error, args)) };
}

/** Connects to Redis; scripts run by EVALSHA (loaded on first NOSCRIPT). */
export async function openRedisAdapter(options: RedisAdapterOptions): Promise<DataAdapter> {
  const redis = new Redis(options.endpoint, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  redis.on("error", () => undefined);
  // Reply: kind, length, head digest, and for a replay the stored record.
  const runxAppend = scripted<[string, number, string, string | undefined]>(
    redis,
    REDIS_APPEND_SCRIPT,
  );
  const runxRead = scripted<[number, string, string[]]>(redis, REDIS_READ_SCRIPT);
  const runxHeads = scripted<string[]>(redis, REDIS_HEADS_SCRIPT);
  await redis.connect();
  const p = options.keyPrefix;
  /**
   * What the adapter keeps per stream: its keys, its digest, and the head this connection last
   * saw (a hint that saves a round trip on appends; every use is checked by the script). Bounded:
   * the cache starts over past MAX_CACHED entries, as does the resources' hash cache.
   */
  const streams = new Map<string, StreamEntry>();
  const resources = new Map<string, string>();
  const resourceHashOf = (source: string, resource: string): string => {
    const id = `${source}\u0000${resource}`;
    let r = resources.get(id);
    if (r === undefined) {
      r = resourceHash(source, resource);
      if (resources.size >= MAX_CACHED) resources.clear();
      resources.set(id, r);
    }
    return r;
  };
  // The core asks twice per operation (evidence, then the operation) with the same strings.
  let last: { s: StreamKey; entry: StreamEntry } | undefined;
  const streamEntry = (s: StreamKey): StreamEntry => {
    if (
      last !== undefined &&
      last.s.aggregateId === s.aggregateId &&
      last.s.resource === s.resource &&
      last.s.source === s.source
    ) {
      return last.entry;
    }
    const id = `${s.source}\u0000${s.resource}\u0000${s.aggregateId}`;
    let entry = streams.get(id);
    if (entry === undefined) {
      const sh = streamHash(s);
      entry = {
        digest: `sha256:${sh}`,
        keys: keysOf(p, sh, resourceHashOf(s.source, s.resource)),
        head: undefined,
      };
      if (streams.size >= MAX_CACHED) streams.clear();
      streams.set(id, entry);
    }
    last = { s: { source: s.source, resource: s.resource, aggregateId: s.aggregateId }, entry };
    return entry;
  };
  const streamKeys = (s: StreamKey): string[] => streamEntry(s).keys;
  const prefixDigest = hashCanonical(p);

  const parseHead = (len: number, text: string): string => {
    if (text === "") {
      if (len > 0) {
        throw new DataStop(
          "provider_unavailable",
          "unsupported legacy projection; migrate it out of band",
        );
      }
      return EMPTY_PROJECTION_DIGEST;
    }
    const [version, digest] = text.split("|");
    if (Number(version) !== len || digest === undefined) {
      throw new DataStop(
        "provider_unavailable",
        "projection is inconsistent with the event stream",
      );
    }
    return digest;
  };
  const parseRecord = (text: string) => JSON.parse(text) as EventRecord;

  return {
    adapter: "data.redis",
    provider: "redis-event-store",
    storageClass: "redis",
    addEvidence(s, evidence) {
      evidence.key_prefix_digest = prefixDigest;
      if (s.aggregateId !== undefined) {
        evidence.stream_digest = streamEntry({
          source: s.source,
          resource: s.resource,
          aggregateId: s.aggregateId,
        }).digest;
      }
    },
    async append(req): Promise<AppendOutcome> {
      const stream = streamEntry(req.stream);
      const { keys } = stream;
      const cached = stream.head;
      let previous =
        req.expectedVersion === 0
          ? EMPTY_PROJECTION_DIGEST
          : cached?.version === req.expectedVersion
            ? cached.digest
            : "";
      // The previous value is this connection's own when it is P0 or the chain value its last
      // commit computed; one the script reported (stale) is checked as it is written.
      let own =
        req.expectedVersion === 0 || (cached?.version === req.expectedVersion && cached.own);
      const eventDigest = req.record.event_digest;
      for (let attempt = 0; attempt < 4; attempt++) {
        const next = own
          ? chainDigestOfOwn(previous, req.record.version, eventDigest)
          : chainDigest(previous, req.record.version, eventDigest);
        const args = redisAppendArgs(keys, req, previous, next);
        let reply: [string, number, string, string | undefined];
        try {
          reply = await runxAppend.call(args);
        } catch (error) {
          reply = await runxAppend.retry(error, args);
        }
        const [kind, len, digest, stored] = reply;
        if (kind === "committed") {
          // The script stored and returned `next`.
          stream.head = { version: Number(len), digest: next, own: true };
          return { kind, projectionDigest: next };
        }
        stream.head = { version: Number(len), digest, own: false };
        if (kind === "replay") {
          return {
            kind,
            record: parseRecord(stored ?? "{}"),
            currentVersion: Number(len),
            projectionDigest: digest,
          };
        }
        if (kind === "idempotency_conflict" || kind === "version_conflict") {
          return { kind, currentVersion: Number(len), projectionDigest: digest };
        }
        previous = digest; // stale: the script told us the head digest stored now
        own = false;
      }
      throw new DataStop(
        "provider_unavailable",
        "append could not settle on the stream head after 4 attempts",
      );
    },
    async readEvents(s, page) {
      const keys = streamKeys(s);
      const [len, proj, items] = await runxRead.run([
        "2",
        keys[0] as string,
        keys[3] as string,
        page.afterVersion !== undefined ? "f" : "t",
        String(page.afterVersion ?? 0),
        String(page.limit),
        s.aggregateId,
      ]);
      const head: StreamHead = {
        version: Number(len),
        projection_digest: parseHead(Number(len), proj),
        last: null,
      };
      return { head, records: items.map(parseRecord) };
    },
    async readHead(s) {
      const keys = streamKeys(s);
      const [len, proj, items] = await runxRead.run([
        "2",
        keys[0] as string,
        keys[3] as string,
        "h",
        "0",
        "0",
        s.aggregateId,
      ]);
      const last = items[0] !== undefined ? parseRecord(items[0]) : null;
      return {
        version: Number(len),
        projection_digest: parseHead(Number(len), proj),
        last,
      };
    },
    async listHeads(q: HeadsQuery): Promise<HeadRecord[]> {
      const [index, heads] = headsKeys(p, resourceHashOf(q.source, q.resource));
      const flat = await runxHeads.run([
        "2",
        index,
        heads,
        q.after !== undefined ? headMember(q.after.committed_at, q.after.aggregate_id) : "",
        String(q.limit),
        ...q.eventTypes,
      ]);
      const rows: HeadRecord[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        rows.push({ ...parseRecord(flat[i + 1] as string), aggregate_id: flat[i] as string });
      }
      return rows;
    },
    async cursorSecret(source) {
      const key = `${p}:source:${sha256Hex(source)}:cursor-secret`;
      let value = await redis.get(key);
      if (value === null) {
        await redis.set(key, randomBytes(32).toString("hex"), "NX");
        value = await redis.get(key);
      }
      if (value === null || value.length < 64) throw new Error("cursor secret is missing");
      return new Uint8Array(Buffer.from(value, "hex"));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
