/**
 * Live events (run status changes, new approvals) feeding the SSE subscriptions. Two sources
 * publish here: this process's executors (immediately, as a job settles) and the run watcher
 * (every change in the state store's run table, whichever process wrote it). A change is
 * published once: repeats of a run's last published (status, receipt) are dropped.
 */
import { EventEmitter, on } from "node:events";

/** A run changed status (started, paused, sealed, failed). */
export interface RunEvent {
  runId: string;
  status: string;
  skill: string;
  receiptId: string | null;
  at: string;
}

/** How many runs' last published state is remembered for de-duplication. */
const REMEMBERED = 10_000;

/** The event hub of one API process. */
export class ApiEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false });
  readonly #last = new Map<string, string>();

  constructor() {
    this.#emitter.setMaxListeners(0);
  }

  /** Publishes a run status change (dropped when it repeats the run's last one). */
  run(event: RunEvent): void {
    const key = `${event.status}|${event.receiptId ?? ""}`;
    if (this.#last.get(event.runId) === key) return;
    this.#last.delete(event.runId);
    this.#last.set(event.runId, key);
    if (this.#last.size > REMEMBERED) {
      this.#last.delete(this.#last.keys().next().value as string);
    }
    this.#emitter.emit("run", event);
  }

  /** Whether anyone is subscribed (the watcher idles otherwise). */
  get listening(): boolean {
    return this.#emitter.listenerCount("run") > 0;
  }

  /** Yields run events until `signal` aborts. */
  async *runs(signal: AbortSignal | undefined): AsyncGenerator<RunEvent> {
    try {
      for await (const [event] of on(this.#emitter, "run", { signal })) yield event as RunEvent;
    } catch (error) {
      if ((error as { name?: string }).name !== "AbortError") throw error;
    }
  }
}
