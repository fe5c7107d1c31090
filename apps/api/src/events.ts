/** In-process live events (run status changes, new approvals) feeding the SSE subscriptions. */
import { EventEmitter, on } from "node:events";

/** A run changed status (started, paused, sealed, failed). */
export interface RunEvent {
  runId: string;
  status: string;
  skill: string;
  receiptId: string | null;
  at: string;
}

/** The event hub of one API process. */
export class ApiEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    this.#emitter.setMaxListeners(0);
  }

  /** Publishes a run status change. */
  run(event: RunEvent): void {
    this.#emitter.emit("run", event);
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
