import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, open, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { INPUTS_DOCUMENT_MAX_BYTES, readInputsDocument } from "./inputs-document.js";

const MARKER = "do-not-echo-7f3a";
let root: string;
let outside: string;
const noStdin = () => Readable.from([]);

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "runx-inputs-"));
  outside = await mkdtemp(path.join(tmpdir(), "runx-outside-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function refusal(spec: string, readStdin: () => Readable = noStdin): Promise<RuntimeError> {
  const result = await readInputsDocument(spec, { workspaceRoot: root, readStdin }).catch(
    (e: unknown) => e,
  );
  if (!(result instanceof RuntimeError)) throw new Error("expected a RuntimeError");
  // Never any part of the document in the message or details.
  expect(JSON.stringify(result.toJSON())).not.toContain(MARKER);
  return result;
}

describe("readInputsDocument", () => {
  it("reads a JSON object from a workspace file", async () => {
    await writeFile(path.join(root, "in.json"), `{"message": "hi", "n": 2}`);
    expect(
      await readInputsDocument("in.json", { workspaceRoot: root, readStdin: noStdin }),
    ).toEqual({ message: "hi", n: 2 });
  });

  it("reads a JSON object from stdin", async () => {
    const readStdin = () => Readable.from([Buffer.from('{"a":'), Buffer.from("1}")]);
    expect(await readInputsDocument("-", { workspaceRoot: root, readStdin })).toEqual({ a: 1 });
  });

  it.each([
    ["not an object", `["${MARKER}"]`],
    ["two JSON values", `{"a":"${MARKER}"} {"b":1}`],
    ["not JSON at all", `${MARKER}: yes`],
  ])("refuses a document that is %s", async (_name, text) => {
    await writeFile(path.join(root, "bad.json"), text);
    expect((await refusal("bad.json")).code).toBe("INPUTS_DOCUMENT_INVALID");
  });

  it("refuses invalid UTF-8", async () => {
    await writeFile(
      path.join(root, "latin1.json"),
      Buffer.concat([Buffer.from(`{"a":"${MARKER}`), Buffer.from([0xff]), Buffer.from('"}')]),
    );
    expect((await refusal("latin1.json")).code).toBe("INPUTS_DOCUMENT_INVALID");
  });

  it("refuses a file larger than 64 MiB without reading it", async () => {
    const handle = await open(path.join(root, "huge.json"), "w");
    await handle.truncate(INPUTS_DOCUMENT_MAX_BYTES + 1); // sparse: no data is written
    await handle.close();
    expect((await refusal("huge.json")).code).toBe("INPUTS_TOO_LARGE");
  });

  it("stops reading stdin at the 64 MiB cap", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let pulled = 0;
    function* endless(): Generator<Buffer> {
      for (;;) {
        pulled += 1;
        yield chunk;
      }
    }
    const error = await refusal("-", () => Readable.from(endless(), { objectMode: false }));
    expect(error.code).toBe("INPUTS_TOO_LARGE");
    expect(pulled).toBeLessThanOrEqual(64 + 2 + 16); // the cap plus stream read-ahead, never unbounded
  });

  it("refuses paths that leave the workspace, lexically or through a symlink", async () => {
    await writeFile(path.join(outside, "secret.json"), `{"k":"${MARKER}"}`);
    await symlink(path.join(outside, "secret.json"), path.join(root, "link.json"));
    expect((await refusal("../x.json")).code).toBe("PATH_ESCAPE");
    expect((await refusal(path.join(outside, "secret.json"))).code).toBe("PATH_ESCAPE");
    expect((await refusal("link.json")).code).toBe("PATH_ESCAPE");
  });

  it("refuses a directory, a FIFO and a missing file", async () => {
    await mkdir(path.join(root, "dir.json"));
    expect((await refusal("dir.json")).code).toBe("INPUTS_DOCUMENT_INVALID");
    execFileSync("mkfifo", [path.join(root, "pipe.json")]);
    expect((await refusal("pipe.json")).code).toBe("INPUTS_DOCUMENT_INVALID");
    expect((await refusal("missing.json")).code).toBe("INPUTS_DOCUMENT_INVALID");
  });
});
