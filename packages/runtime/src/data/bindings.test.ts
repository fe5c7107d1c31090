import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DATA_APPEND_SCOPE, DATA_READ_SCOPE, callDataOperation } from "../tools/data/data-tools.js";
import {
  isSecretLikeName,
  localSourcePath,
  parseBindingDocument,
  resolveBinding,
} from "./bindings.js";
import { DataStop } from "./model.js";

const ALL_SCOPES = [DATA_READ_SCOPE, DATA_APPEND_SCOPE];
const doc = (sources: unknown) => JSON.stringify({ data_sources: sources });
const stopOf = (fn: () => unknown): DataStop => {
  try {
    fn();
  } catch (error) {
    if (error instanceof DataStop) return error;
    throw error;
  }
  throw new Error("expected a stop");
};

describe("data-source bindings", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "runx-bindings-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("names one SQLite file per unbound local:// ref", () => {
    expect(localSourcePath("local://runx-data-store/dev-board")).toBe(
      ".runx/data/local-sources/source-d8b4ab2a7223f7cd.sqlite",
    );
    const binding = resolveBinding("local://x", { workspaceRoot: root, env: {} });
    expect(binding).toMatchObject({
      adapter: "data.sqlite",
      database_path: localSourcePath("local://x"),
    });
  });

  it("refuses an unbound non-local ref with needs_source naming both configs", () => {
    const stop = stopOf(() =>
      resolveBinding("tenant://acme/board", { workspaceRoot: root, env: {} }),
    );
    expect(stop.code).toBe("needs_source");
    expect(stop.message).toContain("RUNX_DATA_SOURCES");
  });

  it("refuses an unknown adapter by name", () => {
    const stop = stopOf(() =>
      parseBindingDocument(doc({ "t://a": { adapter: "data.mongo" } }), "cfg"),
    );
    expect(stop.message).toContain('unknown adapter "data.mongo"');
    expect(stop.message).toContain("data_sources.t://a.adapter");
  });

  it("refuses credentials embedded in an endpoint", () => {
    for (const endpoint of ["redis://user:pw@127.0.0.1:6379/0", "postgres://me:secret@db/x"]) {
      const adapter = endpoint.startsWith("redis") ? "data.redis" : "data.postgres";
      const stop = stopOf(() =>
        parseBindingDocument(doc({ "t://a": { adapter, endpoint } }), "cfg"),
      );
      expect(stop.message).toContain("must not embed credentials");
      expect(stop.message).not.toContain("secret@");
    }
  });

  it("refuses secret-like field names anywhere in a binding", () => {
    expect(isSecretLikeName("Client-Secret")).toBe(true);
    expect(isSecretLikeName("api_key")).toBe(true);
    expect(isSecretLikeName("profile")).toBe(false);
    const stop = stopOf(() =>
      parseBindingDocument(
        doc({
          "t://a": {
            adapter: "data.sqlite",
            database_path: "a.sqlite",
            resources: { r: { auth: { token: "x" } } },
          },
        }),
        "cfg",
      ),
    );
    expect(stop.message).toContain("resources.r.auth.token");
    expect(stop.message).not.toContain('"x"');
  });

  it("refuses unknown fields, escaping database paths and bad key prefixes", () => {
    const bad = [
      { adapter: "data.sqlite", database_path: "a.sqlite", allow_absolute_path: true },
      { adapter: "data.sqlite", database_path: "../a.sqlite" },
      { adapter: "data.sqlite", database_path: "/etc/a.sqlite" },
      { adapter: "data.sqlite", database_path: ".runx/state.sqlite" },
      { adapter: "data.sqlite", database_path: ".runx/receipts/a.sqlite" },
      { adapter: "data.redis", key_prefix: "runx:no-tag" },
      { adapter: "data.redis", key_prefix: "runx:{a}:{b}" },
      { adapter: "sqlite" },
    ];
    for (const binding of bad) {
      expect(stopOf(() => parseBindingDocument(doc({ "t://a": binding }), "cfg")).code).toBe(
        "needs_source",
      );
    }
  });

  it("fails closed on invalid JSON in the project file and names the file", () => {
    mkdirSync(join(root, ".runx"));
    writeFileSync(join(root, ".runx", "data-sources.json"), "{oops");
    const stop = stopOf(() => resolveBinding("local://x", { workspaceRoot: root, env: {} }));
    expect(stop.message).toContain(".runx/data-sources.json");
  });

  it("lets RUNX_DATA_SOURCES win over the project file and reads a relative file path", () => {
    mkdirSync(join(root, ".runx"));
    writeFileSync(
      join(root, ".runx", "data-sources.json"),
      doc({ "t://a": { adapter: "data.sqlite", database_path: "project.sqlite" } }),
    );
    writeFileSync(
      join(root, "env.json"),
      doc({ "t://a": { adapter: "data.sqlite", database_path: "env.sqlite" } }),
    );
    expect(resolveBinding("t://a", { workspaceRoot: root, env: {} })).toMatchObject({
      database_path: "project.sqlite",
    });
    expect(
      resolveBinding("t://a", { workspaceRoot: root, env: { RUNX_DATA_SOURCES: "env.json" } }),
    ).toMatchObject({ database_path: "env.sqlite" });
    const missing = stopOf(() =>
      resolveBinding("t://a", { workspaceRoot: root, env: { RUNX_DATA_SOURCES: "nope.json" } }),
    );
    expect(missing.message).toContain("cannot read");
  });

  it("runs a tool call end to end on the implicit local SQLite file and refuses symlinked paths", async () => {
    const ctx = {
      workspaceRoot: root,
      baseEnv: {},
      scopes: ALL_SCOPES,
      now: () => new Date("2026-07-14T04:00:00Z"),
    };
    const input = {
      data_source_ref: "local://dev",
      resource: "r",
      aggregate_id: "a",
      expected_version: 0,
      idempotency_key: "k",
      event: { type: "t" },
    };
    const result = await callDataOperation("append_event", input, ctx);
    expect(result.status).toBe("success");
    const out = result.status === "success" ? result.output : {};
    expect(out.status).toBe("committed");
    expect((out.data_operation_result as { data: { status: string } }).data.status).toBe(
      "committed",
    );

    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "link"));
    const env = {
      RUNX_DATA_SOURCES: doc({
        "t://s": { adapter: "data.sqlite", database_path: "link/a.sqlite" },
      }),
    };
    const refused = await callDataOperation(
      "read_projection",
      { data_source_ref: "t://s", resource: "r", aggregate_id: "a" },
      { ...ctx, baseEnv: env },
    );
    expect(refused).toMatchObject({ status: "failure", code: "DATA_SOURCE_INVALID" });
  });

  it("fails the invocation with provider_unavailable when the backend is unreachable", async () => {
    const env = {
      RUNX_DATA_SOURCES: doc({
        "t://r": {
          adapter: "data.redis",
          endpoint: "redis://127.0.0.1:1/0",
          key_prefix: "runx:{t}",
        },
      }),
    };
    const result = await callDataOperation(
      "read_projection",
      { data_source_ref: "t://r", resource: "r", aggregate_id: "a" },
      { workspaceRoot: root, baseEnv: env, scopes: ALL_SCOPES, now: () => new Date() },
    );
    expect(result).toMatchObject({ status: "failure", code: "DATA_STORE_UNAVAILABLE" });
  });
});
