/**
 * The state stores of one runtime, opened lazily: the store RUNX_STATE_URL selects is decided
 * when the runtime is built (so a bad URL fails every entry point at once, naming the
 * variable), and nothing is opened until a service asks. The embedded SQLite store serves the
 * synchronous interface and the async port over one connection; PostgreSQL serves the async
 * port only, its driver loaded on first use. runtime-core.ts hands these to every service.
 */
import { RuntimeError } from "../errors.js";
import { openStateStore } from "./open.js";
import type { PgState } from "./pg/connect.js";
import type { AsyncStateStore } from "./port.js";
import { asyncSqliteStateStore } from "./sqlite-async.js";
import { notOnPostgres, stateBackendFromEnv } from "./state-backend.js";
import type { StateBackend } from "./state-backend.js";
import type { StateStore } from "./types.js";

/** The stores of one runtime; each getter opens its store on first use. */
export interface RuntimeStores {
  /** Which store RUNX_STATE_URL selected. */
  readonly backend: StateBackend;
  /** The synchronous SQLite store; STORE_ERROR on PostgreSQL (the console's run state is not served there yet). */
  readonly state: () => StateStore;
  /** The shared PostgreSQL pool, opened (and migrated) on first use; only with `postgres`. */
  readonly postgres: () => Promise<PgState>;
  /** Run state through the async port over the selected store. */
  readonly asyncState: () => Promise<AsyncStateStore>;
  /** Ends the PostgreSQL pool and, unless `keepState`, closes the SQLite store. */
  readonly close: (options: { keepState: boolean }) => void;
}

/** The stores for a workspace whose SQLite file is `stateDb`, as `env` selects them. */
export function runtimeStores(options: {
  env: Readonly<Record<string, string | undefined>>;
  stateDb: string;
  now: () => Date;
}): RuntimeStores {
  const backend = stateBackendFromEnv(options.env);
  let state: StateStore | undefined;
  let postgres: Promise<PgState> | undefined;
  let asyncSqlite: { of: StateStore; port: AsyncStateStore } | undefined;
  let asyncPg: Promise<AsyncStateStore> | undefined;

  const getPostgres = (): Promise<PgState> => {
    if (backend.kind !== "postgres") {
      return Promise.reject(
        new RuntimeError("INTERNAL", "the PostgreSQL state store is not selected"),
      );
    }
    if (postgres !== undefined) return postgres;
    // Loaded on demand: the embedded default never loads the PostgreSQL driver.
    const opening = import("./pg/connect.js").then(({ openPgState }) =>
      openPgState({
        url: backend.url,
        ...(backend.password !== undefined ? { password: backend.password } : {}),
        ...(backend.passwordFile !== undefined ? { passwordFile: backend.passwordFile } : {}),
      }),
    );
    postgres = opening;
    // A failed open is retried by the next caller rather than cached.
    void opening.catch(() => {
      if (postgres === opening) postgres = undefined;
    });
    return postgres;
  };
  const getState = (): StateStore => {
    // What still reads the SQLite store directly (the console's tables, the harness index)
    // is refused rather than writing a local file the other instances never see.
    if (backend.kind === "postgres") {
      throw notOnPostgres(backend.label, "the console's run state (approvals, run jobs)");
    }
    return (state ??= openStateStore({ path: options.stateDb, label: ".runx/state.sqlite" }));
  };
  const getAsyncState = (): Promise<AsyncStateStore> => {
    if (backend.kind === "postgres") {
      return (asyncPg ??= Promise.all([getPostgres(), import("./pg/state-store.js")]).then(
        ([pg, { pgStateStore }]) => pgStateStore(pg, { clock: options.now }),
        (error: unknown) => {
          asyncPg = undefined;
          throw error;
        },
      ));
    }
    // Over the same connection as the synchronous store (one mutex, one write lock), and
    // rebuilt when `close()` has replaced that store.
    const sync = getState();
    if (asyncSqlite?.of !== sync) asyncSqlite = { of: sync, port: asyncSqliteStateStore(sync) };
    return Promise.resolve(asyncSqlite.port);
  };
  return {
    backend,
    state: getState,
    postgres: getPostgres,
    asyncState: getAsyncState,
    close: ({ keepState }) => {
      if (postgres !== undefined) {
        const closing = postgres;
        postgres = undefined;
        void closing.then(
          (pg) => pg.close(),
          () => undefined,
        );
      }
      if (keepState) return;
      state?.close();
      state = undefined;
    },
  };
}
