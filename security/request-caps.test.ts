/**
 * Resource caps on the API's requests: a body over the cap is refused (413) while it streams,
 * before it is buffered and before authentication; a long query URL is refused (414);
 * malformed JSON (not JSON, truncated, invalid UTF-8) is a 400, never a 500; and the API
 * process is alive afterwards.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, data, mutate, query, startApiProcess } from "./kit.js";
import type { ApiProcess } from "./kit.js";

let api: ApiProcess;
beforeAll(async () => {
  api = await startApiProcess();
}, 120_000);
afterAll(() => api?.cleanup());

interface Raw {
  status: number;
  body: string;
  ms: number;
}

/**
 * POSTs to `path`, sending `total` bytes in 64 KiB chunks as fast as the socket takes them,
 * without a Content-Length (chunked). With `declare`, the length is declared with
 * `Expect: 100-continue` and the body is sent only once the server says continue. Resolves
 * as soon as the API answers, which for a refused body is long before the last chunk would
 * have been sent.
 */
function streamPost(path: string, total: number, declare = false): Promise<Raw> {
  const started = Date.now();
  const url = new URL(`${api.url}/trpc/${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: ORIGIN,
          ...(declare ? { "content-length": String(total + 13), expect: "100-continue" } : {}),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started });
          req.destroy();
        });
      },
    );
    // The server cuts the connection after answering; an error before any answer fails.
    req.on("error", (error) => reject(error));
    // A JSON string that never ends: `{"username":"aaaa…`.
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const pump = () => {
      if (sent === 0) req.write('{"username":"');
      while (sent < total && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!req.destroyed) req.end();
    };
    if (declare) req.once("continue", pump);
    else pump();
  });
}

/** POSTs raw bytes. */
async function rawPost(
  path: string,
  body: Buffer | string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${api.url}/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body: parsed };
}

describe("request body caps", () => {
  it("refuses a 400 MiB streamed auth.login body with 413 quickly, and the API lives on", async () => {
    const answer = await streamPost("auth.login", 400 * 1024 * 1024);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: -32013, data: { code: "PAYLOAD_TOO_LARGE" } },
    });
    // Sending 400 MiB over loopback takes seconds; the refusal comes after the first MiB.
    expect(answer.ms).toBeLessThan(5_000);
    expect(api.alive()).toBe(true);
    expect((await query(api.url, "auth.status")).status).toBe(200);
  }, 60_000);

  it("refuses a declared Content-Length over the cap before the body is sent", async () => {
    const answer = await streamPost("auth.login", 50 * 1024 * 1024, true);
    expect(answer.status).toBe(413);
    expect(api.alive()).toBe(true);
  }, 60_000);

  it("refuses a body over the cap on an authenticated mutation the same way", async () => {
    const answer = await streamPost("runs.start", 40 * 1024 * 1024);
    expect(answer.status).toBe(413);
    expect(api.alive()).toBe(true);
  }, 60_000);

  it("accepts a body under the cap", async () => {
    const ok = await rawPost(
      "auth.login",
      JSON.stringify({ username: "x".repeat(10), password: "y".repeat(100) }),
    );
    expect(ok.status).toBe(401);
  });
});

describe("query URL caps", () => {
  it("refuses a GET whose ?input= is over the cap with 414, and the API lives on", async () => {
    const res = await fetch(`${api.url}/trpc/skills.search?input=${"a".repeat(12 * 1024)}`);
    expect(res.status).toBe(414);
    expect(await res.json()).toMatchObject({
      error: { code: -32600, data: { code: "URI_TOO_LONG" } },
    });
    expect(api.alive()).toBe(true);
  });
});

describe("malformed JSON is a 400", () => {
  it.each([
    ["not JSON", Buffer.from("not json")],
    ["truncated JSON", Buffer.from('{"username":"a","password":')],
    [
      "invalid UTF-8",
      Buffer.concat([
        Buffer.from('{"username":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('","password":"x"}'),
      ]),
    ],
  ])("%s", async (_name, body) => {
    const answer = await rawPost("auth.login", body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: {} });
    expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at /);
    expect(api.alive()).toBe(true);
  });

  it("a query's ?input= that is not JSON", async () => {
    const res = await fetch(`${api.url}/trpc/skills.search?input=%7Bnot`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: -32600, data: { code: "BAD_REQUEST" } },
    });
  });

  it("a method other than GET or POST (tRPC would read its body past the caps)", async () => {
    const res = await fetch(`${api.url}/trpc/auth.login`, { method: "PUT", body: "{}" });
    expect(res.status).toBe(405);
  });

  it("keeps answering normal calls afterwards", async () => {
    const admin = await api.operator("caps-admin", "admin");
    const me = await query(api.url, "auth.me", undefined, api.headers(admin));
    expect(data<{ username: string }>(me).username).toBe("caps-admin");
    const bad = await mutate(api.url, "auth.createToken", { name: "" }, api.headers(admin));
    expect(bad.status).toBe(400);
  });
});
