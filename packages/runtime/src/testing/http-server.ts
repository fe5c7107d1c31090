/**
 * Test helper (not for production code): a real HTTP server on 127.0.0.1, port 0, that
 * counts and records the requests it receives, and a scripted in-memory transport for
 * tests that must not touch the network at all.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpRequest, HttpResponse, HttpTransport } from "../tools/types.js";

/** One request the test server received. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted so far (a request that never connected leaves it unchanged). */
  readonly connections: number;
  close(): Promise<void>;
}

/** Handles one request; `body` is the full request body. */
export type TestHandler = (req: ReceivedRequest, res: ServerResponse) => void;

/** Starts a server on 127.0.0.1:0 whose every request goes to `handler`. */
export async function startTestServer(handler: TestHandler): Promise<TestServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(entry);
      handler(entry, res);
    });
  });
  let connections = 0;
  server.on("connection", () => void connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A transport that answers from a script and records what it was asked. */
export interface ScriptedTransport extends HttpTransport {
  sent: HttpRequest[];
}

/** Creates a transport that answers request n with `script(request, n)`. */
export function scriptedTransport(
  script: (req: HttpRequest, index: number) => Omit<HttpResponse, "url">,
): ScriptedTransport {
  const sent: HttpRequest[] = [];
  return {
    sent,
    request(req) {
      sent.push(req);
      return Promise.resolve({ ...script(req, sent.length - 1), url: req.url });
    },
  };
}
