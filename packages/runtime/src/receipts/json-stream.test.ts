import { describe, expect, it } from "vitest";
import { JsonStreamError, JsonStreamReader } from "./json-stream.js";

/** `text` cut into pieces of `size` bytes (multi-byte characters split across pieces). */
function* pieces(text: string, size: number): Generator<Uint8Array> {
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Reads a document whose top level is an object of arrays or values, streamed member by member. */
async function readAll(text: string, size: number, max = 1 << 20): Promise<unknown> {
  const reader = new JsonStreamReader(pieces(text, size), max);
  const out: Record<string, unknown> = {};
  for await (const key of reader.members()) {
    if ((await reader.peek()) === "[") {
      const list: unknown[] = [];
      for await (const _ of reader.elements()) list.push(await reader.value());
      out[key] = list;
    } else out[key] = await reader.value();
  }
  await reader.end();
  return out;
}

describe("JsonStreamReader", () => {
  const doc = {
    a: "plain",
    'ü"key\\': 'quoted "x" and \\ and é漢字🙂',
    list: [1, -2.5e3, true, null, { nested: ["]", "}", "\\"] }, "tail"],
    empty: {},
    none: [],
  };

  it("reads what JSON.parse reads, however the text is cut", async () => {
    for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
      for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
        expect(await readAll(text, size)).toEqual(JSON.parse(text));
      }
    }
  });

  it("names the line of malformed or truncated text", async () => {
    const cases: Array<[string, number]> = [
      ['{\n"a": 1,\n"b": tru\n}', 3],
      ['{\n"a": [1, 2\n', 3],
      ['{"a": "open', 1],
      ['{\n"a": 1 "b": 2}', 2],
      ['{"a": 1}\nextra', 2],
      ['{"a": 1,}', 1],
    ];
    for (const [text, line] of cases) {
      const failure = await readAll(text, 3).catch((error: unknown) => error);
      expect(failure, text).toBeInstanceOf(JsonStreamError);
      expect((failure as JsonStreamError).line, text).toBe(line);
    }
  });

  it("refuses a value longer than its bound instead of holding it", async () => {
    const text = JSON.stringify({ big: "x".repeat(5000) });
    const failure = await readAll(text, 100, 1000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JsonStreamError);
    expect((failure as Error).message).toContain("longer than 1000");
  });
});
