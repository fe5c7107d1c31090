import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsArtifactAdmitOutput } from "../../generated/validate-tools-artifact-admit.output.js";
import { validateToolsArtifactReadOutput } from "../../generated/validate-tools-artifact-read.output.js";
import { artifactAdmitTool, type LocalArtifact } from "./admit.js";
import { artifactReadTool } from "./read.js";
import { admitArtifact } from "./store.js";
import { resolveReadable, resolveRoot } from "../paths.js";
import {
  failureCode,
  makeTempWorkspace,
  makeToolContext,
  successData,
  type TestWorkspace,
  makeLayoutContext,
} from "../../testing/tool-context.js";
import type { JsonRecord, ToolContext } from "../types.js";

let layout: TestWorkspace;
let ctx: ToolContext;

const sha = (data: Buffer | string): string =>
  `sha256:${createHash("sha256").update(data).digest("hex")}`;

async function admit(
  rel: string,
  content: string | Buffer,
  extra: JsonRecord = {},
): Promise<LocalArtifact> {
  writeFileSync(join(layout.workspace, rel), content);
  return successData(
    await artifactAdmitTool.execute({ path: rel, ...extra }, ctx),
  ) as LocalArtifact;
}

async function page(input: JsonRecord): Promise<JsonRecord> {
  const out = successData(await artifactReadTool.execute(input, ctx));
  expect(validateToolsArtifactReadOutput(out)).toBe(true);
  return out;
}

/** Pages through an artifact from offset 0 until eof, checking offsets and range digests. */
async function readAll(
  ref: string,
  source: Buffer,
  encoding: string,
  maxBytes: number,
): Promise<JsonRecord[]> {
  const pages: JsonRecord[] = [];
  let offset = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const p = await page({ artifact_ref: ref, offset, max_bytes: maxBytes, encoding });
    const length = p.length as number;
    expect(p.offset).toBe(offset);
    expect(p.next_offset).toBe(offset + length);
    expect(length).toBeLessThanOrEqual(maxBytes);
    expect(p.range_digest).toBe(sha(source.subarray(offset, offset + length)));
    expect(p.whole_digest).toBe(sha(source));
    pages.push(p);
    offset += length;
    expect(p.eof).toBe(offset === source.length);
    if (p.eof === true) return pages;
    expect(length).toBeGreaterThan(0);
  }
  throw new Error("paging did not terminate");
}

beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext());
});
afterEach(() => layout.cleanup());

describe("artifact.admit", () => {
  it("binds media type, size and whole digest to an opaque reference without any path", async () => {
    const out = await admit("data.bin", "hello", { media_type: " text/plain " });
    expect(out).toMatchObject({ media_type: "text/plain", bytes: 5, whole_digest: sha("hello") });
    expect(out.artifact_ref).toMatch(/^runx:local-artifact:sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(out)).not.toContain("data.bin");
    expect(JSON.stringify(out)).not.toContain(layout.base);
    expect(validateToolsArtifactAdmitOutput(out)).toBe(true);
  });

  it("returns the same reference for the same content and media type, another for another type", async () => {
    const a = await admit("a.txt", "same");
    const b = await admit("b.txt", "same");
    const c = await admit("c.txt", "same", { media_type: "text/plain" });
    expect(b.artifact_ref).toBe(a.artifact_ref);
    expect(c.artifact_ref).not.toBe(a.artifact_ref);
  });

  it("reads the snapshot, not the source edited after admission", async () => {
    const out = await admit("live.txt", "before");
    writeFileSync(join(layout.workspace, "live.txt"), "after!!");
    const p = await page({ artifact_ref: out.artifact_ref, encoding: "utf8" });
    expect(p).toMatchObject({ data: "before", eof: true });
  });

  it("refuses a directory and a file over the admission limit", async () => {
    mkdirSync(join(layout.workspace, "dir"));
    expect(failureCode(await artifactAdmitTool.execute({ path: "dir" }, ctx))).toBe(
      "INPUT_INVALID",
    );
    writeFileSync(join(layout.workspace, "big.bin"), Buffer.alloc(2048));
    const root = await resolveRoot(ctx, {});
    const source = await resolveReadable(root, "big.bin", "path");
    await expect(
      admitArtifact({ runDir: layout.runDir, source, mediaType: "x/y", maxBytes: 1024 }),
    ).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
  });
});

describe("artifact.read", () => {
  it("refuses unknown and foreign references with ARTIFACT_NOT_FOUND and malformed ones as INPUT_INVALID", async () => {
    const out = await admit("a.txt", "mine");
    const other = makeTempWorkspace();
    try {
      const foreign = makeToolContext({ workspaceRoot: other.workspace, runDir: other.runDir });
      writeFileSync(join(other.workspace, "a.txt"), "mine");
      const theirs = successData(await artifactAdmitTool.execute({ path: "a.txt" }, foreign));
      expect(theirs.artifact_ref).not.toBe(out.artifact_ref);
      const read = (ref: unknown): Promise<unknown> =>
        artifactReadTool.execute({ artifact_ref: ref as string }, ctx).then(failureCode);
      expect(await read(theirs.artifact_ref)).toBe("ARTIFACT_NOT_FOUND");
      expect(await read(`runx:local-artifact:sha256:${"0".repeat(64)}`)).toBe("ARTIFACT_NOT_FOUND");
      expect(await read("runx:artifact:abc")).toBe("INPUT_INVALID");
    } finally {
      other.cleanup();
    }
  });

  it("refuses references before anything was admitted in the run", async () => {
    const result = await artifactReadTool.execute(
      { artifact_ref: `runx:local-artifact:sha256:${"a".repeat(64)}` },
      ctx,
    );
    expect(failureCode(result)).toBe("ARTIFACT_NOT_FOUND");
  });

  it("pages base64 bytes that reassemble exactly", async () => {
    const source = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37) % 256));
    const out = await admit("bytes.bin", source);
    const pages = await readAll(out.artifact_ref, source, "base64", 97);
    const joined = Buffer.concat(pages.map((p) => Buffer.from(p.data as string, "base64")));
    expect(joined.equals(source)).toBe(true);
    expect(pages).toHaveLength(Math.ceil(1000 / 97));
  });

  it.each([4, 5, 6, 7, 10, 64])(
    "pages UTF-8 text with characters straddling %i-byte page boundaries without splitting one",
    async (maxBytes) => {
      const text = "aé€😀".repeat(40) + "z€";
      const source = Buffer.from(text, "utf8");
      const out = await admit("text.txt", source, { media_type: "text/plain" });
      const pages = await readAll(out.artifact_ref, source, "utf8", maxBytes);
      for (const p of pages) {
        const slice = source.subarray(p.offset as number, p.next_offset as number);
        expect(p.data).toBe(new TextDecoder("utf-8", { fatal: true }).decode(slice));
      }
      expect(pages.map((p) => p.data as string).join("")).toBe(text);
    },
  );

  it("refuses a utf8 offset inside a character and a page smaller than the character", async () => {
    const out = await admit("emoji.txt", "😀😀");
    const ref = out.artifact_ref;
    const inside = await artifactReadTool.execute(
      { artifact_ref: ref, offset: 1, encoding: "utf8" },
      ctx,
    );
    expect(failureCode(inside)).toBe("INPUT_INVALID");
    const small = await artifactReadTool.execute(
      { artifact_ref: ref, max_bytes: 3, encoding: "utf8" },
      ctx,
    );
    expect(failureCode(small)).toBe("LIMIT_EXCEEDED");
  });

  it("returns an empty eof page at the end and refuses offsets past it", async () => {
    const out = await admit("short.txt", "abc");
    const end = await page({ artifact_ref: out.artifact_ref, offset: 3 });
    expect(end).toMatchObject({
      length: 0,
      next_offset: 3,
      eof: true,
      data: "",
      range_digest: sha(""),
    });
    const past = await artifactReadTool.execute({ artifact_ref: out.artifact_ref, offset: 4 }, ctx);
    expect(failureCode(past)).toBe("INPUT_INVALID");
  });

  it("refuses max_bytes above 4 MiB", async () => {
    const out = await admit("x.txt", "x");
    const input = { artifact_ref: out.artifact_ref, max_bytes: 4 * 1024 * 1024 + 1 };
    expect(artifactReadTool.validateInput(input)).toMatchObject({ ok: false, path: "max_bytes" });
  });
});

describe("artifact.read json_array framing", () => {
  const records = [
    '{"a":"x,]","b":[1,{"c":"}"}]}',
    "[1,2,3]",
    '"quote \\" and ] inside"',
    "3.5",
    "null",
    '{"ü":"€😀"}',
  ];
  const document = `  window.data = [\n  ${records.join(",\n  ")}\n]\n`;

  it.each([50, 64, 100, 4096])(
    "pages records of a prefixed array with %i-byte pages and reassembles them",
    async (maxBytes) => {
      const source = Buffer.from(document, "utf8");
      const out = await admit("data.js", source, { media_type: "application/javascript" });
      const pages = await readAll(out.artifact_ref, source, "json_array", maxBytes);
      expect(pages.flatMap((p) => (p.records as string[] | undefined) ?? [])).toEqual(records);
      expect(pages.every((p) => p.data === undefined)).toBe(true);
      if (maxBytes < 100) expect(pages.length).toBeGreaterThan(1);
    },
  );

  it("finishes trailing whitespace after the closing bracket on the next page", async () => {
    const source = Buffer.from(`[1,2,3]${" ".repeat(8)}`);
    const out = await admit("tail.json", source);
    const pages = await readAll(out.artifact_ref, source, "json_array", 9);
    expect(pages.map((p) => [p.records, p.length])).toEqual([
      [["1", "2", "3"], 7],
      [undefined, 8],
    ]);
  });

  it("frames an empty array as one eof page without records", async () => {
    const out = await admit("empty.json", " [ ] \n");
    const p = await page({ artifact_ref: out.artifact_ref, encoding: "json_array" });
    expect(p).toMatchObject({ eof: true, length: 6 });
    expect(p.records).toBeUndefined();
    expect(p.data).toBeUndefined();
  });

  it("fails on a record larger than the page, an unclosed array and trailing data", async () => {
    const cases: Array<[string, number, string]> = [
      [`  window.data = [${JSON.stringify("x".repeat(30))}]`, 40, "LIMIT_EXCEEDED"],
      [`[${JSON.stringify("x".repeat(100))}]`, 50, "LIMIT_EXCEEDED"],
      ["[1,2", 100, "INPUT_INVALID"],
      ["[1] 2", 100, "INPUT_INVALID"],
      ["[1,,2]", 100, "INPUT_INVALID"],
      ["{}", 100, "INPUT_INVALID"],
    ];
    for (const [text, maxBytes, code] of cases) {
      const out = await admit("bad.json", text);
      const result = await artifactReadTool.execute(
        { artifact_ref: out.artifact_ref, encoding: "json_array", max_bytes: maxBytes },
        ctx,
      );
      expect([text, failureCode(result)]).toEqual([text, code]);
    }
  });

  it("refuses an offset that is not a record boundary", async () => {
    const out = await admit("arr.json", "[10,20,30]");
    const result = await artifactReadTool.execute(
      { artifact_ref: out.artifact_ref, encoding: "json_array", offset: 2 },
      ctx,
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
  });
});
