import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataAdapter } from "./adapter.js";
import type { HeadRecord } from "./model.js";
import { recomputeChain } from "./model.js";
import { dataStoreContract } from "./contract.test-kit.js";
import { runOnAdapter } from "./operations.js";
import { headMember, openRedisAdapter, redisStreamKeys } from "./redis.js";
import { REDIS_URL, scratchRedisPrefix } from "./test-services.js";

dataStoreContract("redis", () => {
  const scratch = scratchRedisPrefix();
  return Promise.resolve({
    open: () => openRedisAdapter({ endpoint: REDIS_URL, keyPrefix: scratch.prefix }),
    destroy: () => scratch.drop(),
  });
});

describe("redis append script: storage layout", () => {
  const scratch = scratchRedisPrefix();
  let adapter: DataAdapter;
  let redis: Redis;
  let n = 0;
  beforeAll(async () => {
    adapter = await openRedisAdapter({ endpoint: REDIS_URL, keyPrefix: scratch.prefix });
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await adapter.close();
    await redis.quit();
    await scratch.drop();
  });
  const fresh = () => {
    const stream = {
      data_source_ref: `tenant://layout/${process.pid}/${++n}`,
      resource: "board_events",
      aggregate_id: "posting-1",
    };
    const [list, idempotency, index, heads] = redisStreamKeys(scratch.prefix, {
      source: stream.data_source_ref,
      resource: stream.resource,
      aggregateId: stream.aggregate_id,
    }) as [string, string, string, string];
    return { stream, list, idempotency, index, heads };
  };
  const append = (
    stream: Record<string, string>,
    version: number,
    fields: Record<string, string> = {},
  ) =>
    runOnAdapter(
      adapter,
      "append_event",
      {
        ...stream,
        expected_version: version,
        idempotency_key: `k${version + 1}`,
        event: { type: "t", n: version + 1 },
        ...fields,
      },
      { now: () => new Date("2026-07-14T04:00:00.000Z") },
    );

  it("keeps one index member per stream whether or not the commit millisecond changes", async () => {
    const { stream, index } = fresh();
    const at = "2026-07-14T05:00:00.000Z";
    expect((await append(stream, 0, { observed_at: at })).status).toBe("committed");
    expect((await append(stream, 1, { observed_at: at })).status).toBe("committed");
    expect(await redis.zrange(index, "0", "-1")).toEqual([headMember(at, "posting-1")]);
    expect((await append(stream, 2, { observed_at: "2026-07-14T06:00:00.000Z" })).status).toBe(
      "committed",
    );
    const older = "2026-07-14T01:00:00.000Z";
    expect((await append(stream, 3, { observed_at: older })).status).toBe("committed");
    expect(await redis.zrange(index, "0", "-1")).toEqual([headMember(older, "posting-1")]);
    // An observed_at with an offset is indexed at its instant; a commit stamped by the clock
    // (2026-07-14T04:00:00.000Z here) at the clock's.
    expect((await append(stream, 4, { observed_at: "2026-07-14T07:00:00.5+02:00" })).status).toBe(
      "committed",
    );
    expect(await redis.zrange(index, "0", "-1")).toEqual([
      headMember("2026-07-14T05:00:00.500Z", "posting-1"),
    ]);
    expect((await append(stream, 5)).status).toBe("committed");
    expect(await redis.zrange(index, "0", "-1")).toEqual(["08638215998400000|posting-1"]);
    const heads = await runOnAdapter(
      adapter,
      "list_stream_heads",
      { data_source_ref: stream.data_source_ref, resource: stream.resource },
      { now: () => new Date() },
    );
    expect(heads.rows.map((r) => [(r as HeadRecord).aggregate_id, r.version])).toEqual([
      ["posting-1", 6],
    ]);
  });

  it("loads its scripts again when the server has forgotten them (restart, SCRIPT FLUSH)", async () => {
    const { stream, list } = fresh();
    expect((await append(stream, 0)).status).toBe("committed");
    await redis.script("FLUSH");
    expect((await append(stream, 1)).status).toBe("committed");
    await redis.script("FLUSH");
    const read = await runOnAdapter(
      adapter,
      "read_events",
      { ...stream, limit: 5 },
      {
        now: () => new Date(),
      },
    );
    expect(read.events.map((e) => e.version)).toEqual([1, 2]);
    expect(await redis.llen(list)).toBe(2);
  });

  it("answers provider_unavailable, without hanging, once its connection is gone", async () => {
    const { stream, list } = fresh();
    const gone = await openRedisAdapter({ endpoint: REDIS_URL, keyPrefix: scratch.prefix });
    const appendVia = (version: number) =>
      runOnAdapter(
        gone,
        "append_event",
        { ...stream, expected_version: version, idempotency_key: `k${version + 1}`, event: {} },
        { now: () => new Date() },
      );
    expect((await appendVia(0)).status).toBe("committed");
    await gone.close();
    const r = await appendVia(1);
    expect(r.status).toBe("provider_unavailable");
    expect(r.stop_conditions[0]?.message).toMatch(/^data source is unavailable: .*closed/i);
    const read = await runOnAdapter(gone, "read_projection", stream, { now: () => new Date() });
    expect(read.status).toBe("provider_unavailable");
    expect(await redis.llen(list)).toBe(1);
  });

  it("refuses to append after an out-of-band push and writes nothing", async () => {
    const { stream, list, idempotency, heads } = fresh();
    await append(stream, 0);
    await redis.rpush(list, '{"forged":true}');
    const head = await redis.hget(heads, "posting-1");
    const r = await append(stream, 1);
    expect(r.status).toBe("provider_unavailable");
    expect(r.stop_conditions[0]?.message).toMatch(/projection is inconsistent/);
    expect(await redis.llen(list)).toBe(2);
    expect(await redis.hkeys(idempotency)).toEqual(["k1"]);
    expect(await redis.hget(heads, "posting-1")).toBe(head);
    const read = await runOnAdapter(adapter, "read_projection", stream, { now: () => new Date() });
    expect(read.status).toBe("provider_unavailable");
  });

  it("refuses a stream without a head (a legacy layout) and writes nothing", async () => {
    const { stream, list, idempotency } = fresh();
    await redis.rpush(list, '{"legacy":true}');
    const r = await append(stream, 0);
    expect(r.status).toBe("provider_unavailable");
    expect(r.stop_conditions[0]?.message).toMatch(/unsupported legacy projection/);
    expect(await redis.llen(list)).toBe(1);
    expect(await redis.exists(idempotency)).toBe(0);
    const later = await append(stream, 1);
    expect(later.stop_conditions[0]?.message).toMatch(/unsupported legacy projection/);
  });

  it("appends correctly once its per-stream cache has started over (more streams than it keeps)", async () => {
    // The adapter keeps keys and the last-seen head of at most 10,000 streams; past that it
    // starts over, and a stream it forgot is appended to without the head hint (the script
    // reports the stored head and the append goes on from it).
    const first = fresh();
    expect((await append(first.stream, 0)).status).toBe("committed");
    const source = `tenant://many/${process.pid}`;
    for (let i = 0; i < 10_001; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, 10_001 - i) }, (_, j) =>
          append(
            { data_source_ref: source, resource: "board_events", aggregate_id: `s${i + j}` },
            0,
          ),
        ),
      );
    }
    const again = await append(first.stream, 1);
    expect(again).toMatchObject({ status: "committed", after_version: 2 });
    const read = await runOnAdapter(
      adapter,
      "read_events",
      { ...first.stream, limit: 5 },
      {
        now: () => new Date(),
      },
    );
    expect(read.projection_digest).toBe(again.projection_digest);
    expect(recomputeChain(read.events)).toBe(again.projection_digest);
  }, 60_000);
});
