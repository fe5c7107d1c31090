/**
 * Request caps, applied before anything else looks at a request (authentication included):
 * the URL (where queries and subscriptions carry `?input=`) is capped, and a mutation's body
 * is read here — counted while it streams and refused as soon as it passes its procedure's
 * cap, so it is never buffered whole — then checked to be UTF-8 JSON. tRPC gets the checked
 * text as `req.body` (its node adapter uses a string body as is), so nothing downstream reads
 * the socket again or can fail on malformed input with a 500.
 *
 * Headers are left to Node's own limits (16 KiB for the request line and headers together,
 * answered 431; 60 s to receive them), which are already small.
 */
import type { IncomingMessage } from "node:http";

/** What the server answers for a request the caps refuse. */
export interface Refusal {
  status: 400 | 413 | 414 | 415;
  code: "BAD_REQUEST" | "PAYLOAD_TOO_LARGE" | "URI_TOO_LONG" | "UNSUPPORTED_MEDIA_TYPE";
  message: string;
}

/** The longest request URL accepted (path plus `?input=`), in bytes. */
export const MAX_URL_BYTES = 8 * 1024;

/** The body cap of every procedure not listed in `BODY_LIMITS`. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Procedures whose input legitimately carries more than the default: a run's inputs and a
 * paused run's answers are skill data. 4 MiB is the javascript runner's input limit
 * (JAVASCRIPT_IO_LIMIT_BYTES in packages/runtime/src/runners/javascript.ts), so a bigger body
 * could not run anyway.
 */
export const BODY_LIMITS: Readonly<Record<string, number>> = {
  "runs.start": 4 * 1024 * 1024,
  "runs.answer": 4 * 1024 * 1024,
};

/**
 * After a body is refused, what is left of it is read and dropped for this long before the
 * connection is cut, so that a client still sending reads the 413 instead of a reset (a reset
 * discards what the client had not read yet). Bounded in time, not bytes: a fast client can
 * send many MiB before it gets to read the answer.
 */
export const LINGER_AFTER_REFUSAL_MS = 1_000;

/** How long a client has to send the whole request (headers and body). */
export const REQUEST_TIMEOUT_MS = 60_000;

const MIB = 1024 * 1024;
const size = (bytes: number) =>
  bytes >= MIB ? `${bytes / MIB} MiB` : `${Math.round(bytes / 1024)} KiB`;

/** The procedures a `/trpc/<a>,<b>` URL names (a batch names several). */
function procedurePaths(url: string): string[] {
  const path = url.split("?")[0]!.slice("/trpc/".length);
  return path.split(",").map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
}

/** True when every procedure a `/trpc/...` URL names is one of `names`. */
export function namesOnly(url: string, names: ReadonlySet<string>): boolean {
  return procedurePaths(url).every((p) => names.has(p));
}

/** The body cap of a request to `url`: the largest cap among the procedures it names. */
export function bodyLimit(url: string): number {
  return Math.max(...procedurePaths(url).map((p) => BODY_LIMITS[p] ?? DEFAULT_BODY_LIMIT));
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes and parses `bytes` as JSON; a Refusal naming what is wrong otherwise. */
function checkJson(bytes: Buffer, what: string): Refusal | null {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { status: 400, code: "BAD_REQUEST", message: `${what} is not valid UTF-8` };
  }
  try {
    JSON.parse(text);
  } catch {
    return { status: 400, code: "BAD_REQUEST", message: `${what} is not valid JSON` };
  }
  return null;
}

/** Checks the URL: its length, and that a `?input=` is JSON. */
export function checkUrl(url: string): Refusal | null {
  if (Buffer.byteLength(url) > MAX_URL_BYTES) {
    return {
      status: 414,
      code: "URI_TOO_LONG",
      message: `the request URL is longer than ${size(MAX_URL_BYTES)}; send large inputs as a mutation body`,
    };
  }
  const q = url.indexOf("?");
  if (q < 0) return null;
  const input = new URLSearchParams(url.slice(q + 1)).get("input");
  return input === null ? null : checkJson(Buffer.from(input, "utf8"), "the ?input= parameter");
}

/**
 * Reads a POST body under `limit` bytes. A declared Content-Length over the cap is refused
 * without reading; a streamed body is refused at the first chunk past the cap (the rest is not
 * read). Resolves with the body's text, or a Refusal.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ text: string } | { refused: Refusal }> {
  const tooLarge: Refusal = {
    status: 413,
    code: "PAYLOAD_TOO_LARGE",
    message: `the request body is larger than ${size(limit)}`,
  };
  const type = (req.headers["content-type"] ?? "application/json").split(";")[0]!.trim();
  if (type.toLowerCase() !== "application/json") {
    return Promise.resolve({
      refused: {
        status: 415,
        code: "UNSUPPORTED_MEDIA_TYPE",
        message: "the request body must be application/json",
      },
    });
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit) return Promise.resolve({ refused: tooLarge });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        done();
        resolve({ refused: tooLarge });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      const bytes = Buffer.concat(chunks, total);
      if (bytes.length === 0) return resolve({ text: "" });
      const bad = checkJson(bytes, "the request body");
      resolve(bad === null ? { text: bytes.toString("utf8") } : { refused: bad });
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/**
 * Reads and drops what is left of a refused body (nothing is kept), and destroys the socket
 * `LINGER_AFTER_REFUSAL_MS` after the refusal unless the body has ended by then.
 */
export function drainThenClose(req: IncomingMessage): void {
  const timer = setTimeout(() => req.socket.destroy(), LINGER_AFTER_REFUSAL_MS);
  timer.unref();
  const stop = () => clearTimeout(timer);
  req.once("end", stop);
  req.socket.once("close", stop);
  req.on("error", () => undefined);
  req.resume();
}
