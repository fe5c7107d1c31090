import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const appendArgs = (version: number, key: string, type: string) => [
  "skill",
  "skills/data-store",
  "-i",
  "data_source_ref=local://runx-data-store/dev-board",
  "-i",
  "resource=board_events",
  "-i",
  "aggregate_id=posting-123",
  "--input-json",
  `expected_version=${version}`,
  "-i",
  `idempotency_key=${key}`,
  "--input-json",
  `event={"type":"${type}","payload":{"actor":"agent-9"}}`,
  "--json",
];

describe("the bundled skills/data-store package", () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace("runx-data-store-");
    ws.addBundledSkill("data-store");
  });
  afterEach(() => ws.cleanup());

  it("replays its fixtures through runx harness", async () => {
    const result = await runx(ws, ["harness", "skills/data-store", "--json"]);
    expect(result.code, result.stderr).toBe(0);
  });

  it("appends, reads back, replays a retry and records the data operation in receipts", async () => {
    const first = await runx(ws, appendArgs(0, "posting-123:create", "posting.created"));
    expect(first.code, first.stderr).toBe(0);
    const envelope = first.json<{ result: Record<string, unknown>; receipt_id: string }>();
    expect(envelope.result).toMatchObject({ status: "committed", after_version: 1 });
    expect(ws.files(".runx/data/local-sources")).toEqual([
      ".runx/data/local-sources/source-d8b4ab2a7223f7cd.sqlite",
    ]);

    const retry = await runx(ws, appendArgs(0, "posting-123:create", "posting.created"));
    expect(retry.json<{ result: Record<string, unknown> }>().result).toMatchObject({
      status: "idempotent_replay",
      event_ref: "board_events:posting-123:1",
      result_digest: envelope.result.result_digest,
    });

    const stale = await runx(ws, appendArgs(0, "posting-123:claim", "posting.claimed"));
    expect(stale.code).toBe(0);
    expect(stale.json<{ result: Record<string, unknown> }>().result).toMatchObject({
      status: "conflict",
      stop_conditions: [{ code: "conflict", message: "expected version 0, got 1" }],
    });

    const receipts = ws
      .files(".runx/receipts")
      .filter((f) => f.endsWith(".json") && !f.endsWith("index.json"))
      .map((f) => JSON.parse(readFileSync(join(ws.root, f), "utf8")) as Record<string, unknown>);
    const facts = receipts
      .map(
        (r) =>
          (r.metadata as { data_operation?: Record<string, unknown> } | undefined)?.data_operation,
      )
      .filter((f) => f !== undefined);
    expect(facts).toContainEqual(
      expect.objectContaining({
        data_source_ref: "local://runx-data-store/dev-board",
        adapter: "data.sqlite",
        operation: "append_event",
        resource: "board_events",
        status: "committed",
        before_version: 0,
        after_version: 1,
        event_digest: envelope.result.event_digest,
        redactions: [],
      }),
    );
    expect(facts).toContainEqual(
      expect.objectContaining({ operation: "read_projection", after_version: 1 }),
    );
    expect(JSON.stringify(receipts)).not.toContain("local-sources");

    const verify = await runx(ws, ["verify", "--json"]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  /** Every receipt the workspace holds. */
  const receiptsOf = (): Record<string, unknown>[] =>
    ws
      .files(".runx/receipts")
      .filter((f) => f.endsWith(".json") && !f.endsWith("index.json"))
      .map((f) => JSON.parse(readFileSync(join(ws.root, f), "utf8")) as Record<string, unknown>);
  /** The step receipt that records a data operation, with its seal and facts. */
  const dataStepReceipt = () => {
    const found = receiptsOf().filter(
      (r) => (r.metadata as { data_operation?: unknown } | undefined)?.data_operation !== undefined,
    );
    expect(found).toHaveLength(1);
    const receipt = found[0] as {
      seal: { disposition: string; reason_code?: string };
      metadata: { failure_code?: string; data_operation: Record<string, unknown> };
    };
    return receipt;
  };

  it("seals a graph step that lacks the data scope blocked with needs_authority, before any storage", async () => {
    ws.write(
      "skills/ro-writer/SKILL.md",
      "---\nname: ro-writer\n---\nTries to write with a read grant.\n",
    );
    ws.write(
      "skills/ro-writer/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    scopes: [runx:data:read]",
        "    graph:",
        "      name: ro-writer",
        "      steps:",
        "        - id: append",
        "          tool: data.append_event",
        "          scopes: [runx:data:read]",
        "          inputs:",
        "            data_source_ref: local://runx-data-store/dev-board",
        "            resource: board_events",
        "            aggregate_id: posting-123",
        "            expected_version: 0",
        "            idempotency_key: posting-123:create",
        "            event: {type: posting.created}",
        "",
      ].join("\n"),
    );
    const result = await runx(ws, ["skill", "skills/ro-writer", "--json"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("needs_authority");
    const receipt = dataStepReceipt();
    expect(receipt.seal.disposition).toBe("blocked");
    expect(receipt.metadata.failure_code).toBe("POLICY_DENIED");
    expect(receipt.metadata.data_operation).toMatchObject({
      operation: "append_event",
      status: "stopped",
      stop_codes: ["needs_authority"],
    });
    // Refused before the source was opened: no database file was created.
    expect(ws.files(".runx/data")).toEqual([]);
  });

  it("seals an append carrying a password failed with redaction_required and never records the value", async () => {
    const secret = "hunter2-never-in-a-receipt";
    const args = appendArgs(0, "account:link", "account.linked");
    args[args.length - 2] = `event={"type":"account.linked","payload":{"password":"${secret}"}}`;
    const result = await runx(ws, args);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("redaction_required");
    expect(result.stdout + result.stderr).not.toContain(secret);
    const receipt = dataStepReceipt();
    expect(receipt.seal.disposition).toBe("failed");
    expect(receipt.metadata.failure_code).toBe("REDACTION_REQUIRED");
    expect(receipt.metadata.data_operation).toMatchObject({
      operation: "append_event",
      status: "stopped",
      stop_codes: ["redaction_required"],
      redactions: [{ path: "event.payload.password", reason: "secret_field" }],
    });
    expect(JSON.stringify(receiptsOf())).not.toContain(secret);
  });

  it("fails a malformed request with the stop condition named", async () => {
    const result = await runx(ws, [
      "skill",
      "skills/data-store",
      "read_events",
      "-i",
      "data_source_ref=local://x",
      "-i",
      "resource=board_events",
      "-i",
      "aggregate_id=a",
      "--input-json",
      "limit=0",
      "--json",
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("too_broad");
  });
});
