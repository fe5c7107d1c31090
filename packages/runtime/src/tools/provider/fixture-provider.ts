/**
 * The local fixture provider: a deterministic `ProviderDriver` whose whole world is one
 * JSON state file under the run or workspace state. Reads return stored records; mutations
 * apply `record.create` / `record.update` / `record.delete` (any other operation is logged
 * as a generic applied effect) and are idempotent per provider key: the same key returns
 * the first result without a second effect. Effect ids come from a sequence, so the same
 * operations in the same order always produce the same state and results.
 */
import { readFile } from "node:fs/promises";
import { RuntimeError } from "../../errors.js";
import { writeFileAtomic } from "../effect-ledger.js";
import type { JsonRecord, ProviderDriver } from "../types.js";

/** Schema tag of the fixture provider's state file. */
export const FIXTURE_PROVIDER_SCHEMA = "runx.fixture_provider.v1";

/** One applied effect, by provider idempotency key. */
export interface FixtureEffect {
  effect_id: string;
  operation: string;
  target: string;
  result: JsonRecord;
}

/** The persisted world of a fixture provider. */
export interface FixtureProviderState {
  schema: typeof FIXTURE_PROVIDER_SCHEMA;
  provider: string;
  sequence: number;
  /** Records by target, then by record id. */
  records: Record<string, Record<string, JsonRecord>>;
  /** Applied effects by provider idempotency key, in application order. */
  effects: Record<string, FixtureEffect>;
}

/** Options of a fixture provider. */
export interface FixtureProviderOptions {
  name: string;
  stateFile: string;
}

/** A fixture provider driver, with its state readable for inspection. */
export interface FixtureProvider extends ProviderDriver {
  snapshot(): Promise<FixtureProviderState>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function failed(message: string, reason: string): RuntimeError {
  return new RuntimeError("PROVIDER_FAILED", message, { reason });
}

async function load(options: FixtureProviderOptions): Promise<FixtureProviderState> {
  let text: string;
  try {
    text = await readFile(options.stateFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw failed("cannot read the fixture provider state", "state_read");
    }
    return {
      schema: FIXTURE_PROVIDER_SCHEMA,
      provider: options.name,
      sequence: 0,
      records: {},
      effects: {},
    };
  }
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    throw failed("the fixture provider state is not valid JSON", "state_parse");
  }
  if (
    !isObject(state) ||
    state.schema !== FIXTURE_PROVIDER_SCHEMA ||
    state.provider !== options.name ||
    typeof state.sequence !== "number" ||
    !isObject(state.records) ||
    !isObject(state.effects)
  ) {
    throw failed("the fixture provider state is malformed", "state_shape");
  }
  return state as unknown as FixtureProviderState;
}

function recordId(payload: JsonRecord, required: boolean, fallback: string): string {
  const id = payload.id;
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number") return String(id);
  if (required) throw failed("the payload needs a record id", "record_id");
  return fallback;
}

function apply(
  state: FixtureProviderState,
  operation: string,
  target: string,
  payload: JsonRecord,
  effectId: string,
): JsonRecord {
  const records = (state.records[target] ??= {});
  switch (operation) {
    case "record.create": {
      const id = recordId(payload, false, `${target}-${state.sequence}`);
      if (records[id] !== undefined) throw failed(`record ${id} already exists`, "record_exists");
      const record: JsonRecord = { ...payload, id };
      records[id] = record;
      return { effect_id: effectId, status: "created", record_id: id, record };
    }
    case "record.update": {
      const id = recordId(payload, true, "");
      const existing = records[id];
      if (existing === undefined) throw failed(`record ${id} does not exist`, "record_missing");
      const record: JsonRecord = { ...existing, ...payload, id };
      records[id] = record;
      return { effect_id: effectId, status: "updated", record_id: id, record };
    }
    case "record.delete": {
      const id = recordId(payload, true, "");
      if (records[id] === undefined) throw failed(`record ${id} does not exist`, "record_missing");
      delete records[id];
      return { effect_id: effectId, status: "deleted", record_id: id };
    }
    default:
      return { effect_id: effectId, status: "applied", operation, target, payload };
  }
}

/** Creates a deterministic local provider driver backed by `stateFile`. */
export function createFixtureProvider(options: FixtureProviderOptions): FixtureProvider {
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    name: options.name,
    snapshot: () => serialized(() => load(options)),
    read(operation, target, input) {
      return serialized(async (): Promise<JsonRecord> => {
        const state = await load(options);
        const records = state.records[target] ?? {};
        if (operation === "record.get" || operation === "record.read") {
          const id = recordId(input, true, "");
          const record = records[id];
          return { target, found: record !== undefined, record: record ?? null };
        }
        if (operation === "effect.list") {
          const effects = Object.values(state.effects).filter((effect) => effect.target === target);
          return {
            target,
            count: effects.length,
            effects: effects.map((effect) => ({ ...effect })),
          };
        }
        const ids = Object.keys(records).sort();
        return { target, count: ids.length, records: ids.map((id) => records[id] ?? {}) };
      });
    },
    mutate(operation, target, payload, idempotencyKey) {
      return serialized(async () => {
        const state = await load(options);
        const prior = state.effects[idempotencyKey];
        if (prior !== undefined) return prior.result;
        state.sequence += 1;
        const effectId = `fx_${String(state.sequence).padStart(6, "0")}`;
        const result = apply(state, operation, target, payload, effectId);
        state.effects[idempotencyKey] = { effect_id: effectId, operation, target, result };
        await writeFileAtomic(options.stateFile, `${JSON.stringify(state, null, 2)}\n`);
        return result;
      });
    },
  };
}
