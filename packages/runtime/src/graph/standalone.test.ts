import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { packageArtifacts } from "./artifacts.js";
import { graphFromRunner } from "./document.js";
import { buildGraphDocumentPackage, looksLikeGraphDocument } from "./standalone.js";

const OLDER_DIALECT = [
  "name: sequential-echo",
  "owner: runx",
  "steps:",
  "  - id: first",
  "    skill: ../../skills/json-output",
  "    inputs:",
  "      message: hello",
  "  - id: second",
  "    skill: ../../skills/echo",
  "    mutation: true",
  '    idempotency_key: "{{request_id}}"',
  "    context:",
  "      message: first.result.data.message",
  "",
].join("\n");

function thrown(body: () => unknown): RuntimeError {
  try {
    body();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

describe("standalone graph documents", () => {
  it("read the older dialect (top-level name/owner/steps, no result_from) as a one-runner package", () => {
    const pkg = buildGraphDocumentPackage({ text: OLDER_DIALECT, file: "graph.yaml" });
    expect(pkg.name).toBe("sequential-echo");
    expect(Object.keys(pkg.runners)).toEqual(["graph"]);
    const runner = pkg.runners.graph;
    expect(runner?.type).toBe("graph");
    expect(runner?.default).toBe(true);
    if (runner?.type !== "graph") throw new Error("not a graph runner");
    const doc = graphFromRunner(runner);
    expect(doc.owner).toBe("runx");
    expect(doc.result_from).toEqual(["second"]);
    expect(doc.result_from_defaulted).toBe(true);
    const second = doc.steps[1];
    expect(second?.context.message).toEqual({
      step: "first",
      path: ["result", "data", "message"],
      ref: "first.result.data.message",
    });
    expect(second?.mutating).toBe(true);
    expect(second?.idempotency_key).toBe("{{request_id}}");
  });

  it("read the graph: wrapper form too", () => {
    const text = `graph:\n  result_from: [second]\n${OLDER_DIALECT.replace(/^/gm, "  ").trimEnd()}\n`;
    const pkg = buildGraphDocumentPackage({ text, file: "g.yaml" });
    const runner = pkg.runners.graph;
    if (runner?.type !== "graph") throw new Error("not a graph runner");
    expect(graphFromRunner(runner).result_from_defaulted).toBe(false);
  });

  it("refuse YAML that is not a graph document, naming the file", () => {
    const error = thrown(() =>
      buildGraphDocumentPackage({ text: "name: x\nkind: skill\ntarget: ..\n", file: "f.yaml" }),
    );
    expect(error.code).toBe("PACKAGE_INVALID");
    expect(error.details.file).toBe("f.yaml");
    expect(looksLikeGraphDocument({ name: "x", steps: [] })).toBe(true);
    expect(looksLikeGraphDocument({ name: "x", target: ".." })).toBe(false);
  });

  it("report an invalid step with file, line and key path", () => {
    const text = OLDER_DIALECT.replace(
      "      message: first.result.data.message",
      "      message: later.x",
    );
    const error = thrown(() => buildGraphDocumentPackage({ text, file: "graph.yaml" }));
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject({ file: "graph.yaml", line: 13 });
    expect(String(error.details.path)).toContain("steps[1].context");
  });

  it("refuse keys beside a graph: wrapper", () => {
    const error = thrown(() =>
      buildGraphDocumentPackage({
        text: "graph:\n  name: g\n  steps:\n    - {id: a, skill: ./x}\nextra: 1\n",
        file: "g.yaml",
      }),
    );
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject({ line: 5, path: "extra" });
  });
});

describe("wrap_as artifact envelopes", () => {
  it("wrap the whole output under the declared name as {data}, with or without a packet id", () => {
    expect(packageArtifacts({ message: "hi" }, { wrap_as: "result" })).toEqual({
      result: { data: { message: "hi" } },
    });
    expect(
      packageArtifacts({ a: 1 }, { wrap_as: "evidence", packet: "runx.effect.evidence.v1" }),
    ).toEqual({ evidence: { data: { a: 1 } } });
  });

  it("leave outputs alone without wrap_as, or when already in envelope form", () => {
    expect(packageArtifacts({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(packageArtifacts({ a: 1 }, { named_emits: { b: "a" } })).toEqual({
      a: 1,
      b: { data: 1 },
    });
    const wrapped = { result: { data: { a: 1 } } };
    expect(packageArtifacts(wrapped, { wrap_as: "result" })).toBe(wrapped);
  });
});
