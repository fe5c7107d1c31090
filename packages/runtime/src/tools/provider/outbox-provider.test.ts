import { existsSync, readFileSync, readdirSync, symlinkSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { createOutboxProvider, outboxMessageId } from "./outbox-provider.js";
import { makeTempWorkspace } from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(succeeded)";
  } catch (error) {
    return isRuntimeError(error) ? error.code : "(not a RuntimeError)";
  }
}

let layout: TestWorkspace;
beforeEach(() => {
  layout = makeTempWorkspace("runx-outbox-");
});
afterEach(() => layout.cleanup());

const message = {
  principal: "acct_acme",
  audience: { type: "list", ref: "list:june" },
  content_digest: "sha256:" + "a".repeat(64),
  consent_basis: "opted in",
  content: "June",
};

describe("createOutboxProvider", () => {
  it("writes one message file in the workspace's outbox, never in runx's state", async () => {
    const outbox = createOutboxProvider({ workspaceRoot: layout.workspace });
    const sent = await outbox.mutate("message.send", "email", message, "pk1");
    const id = outboxMessageId("pk1");
    expect(sent).toMatchObject({ message_id: id, status: "queued", audience_ref: "list:june" });
    const file = join(layout.workspace, "outbox", "email", `${id}.json`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      schema: "runx.outbox.message.v1",
      consent_basis: "opted in",
      payload: message,
    });
    expect(existsSync(join(layout.workspace, ".runx", "outbox"))).toBe(false);
  });

  it("sends once per key: the same key returns the first result and writes nothing new", async () => {
    const outbox = createOutboxProvider({ workspaceRoot: layout.workspace });
    const first = await outbox.mutate("message.send", "email", message, "pk1");
    const again = await outbox.mutate("message.send", "email", { ...message, content: "x" }, "pk1");
    expect(again).toEqual(first);
    expect(readdirSync(join(layout.workspace, "outbox", "email"))).toHaveLength(1);
    const read = await outbox.read("message.read", "email", { message_id: first.message_id! });
    expect(read).toMatchObject({ found: true, idempotency_key: "pk1" });
  });

  it("refuses an unknown channel, a missing consent basis and other operations", async () => {
    const outbox = createOutboxProvider({ workspaceRoot: layout.workspace });
    expect(await codeOf(outbox.mutate("message.send", "fax", message, "k"))).toBe(
      "PROVIDER_FAILED",
    );
    const { consent_basis: _, ...noConsent } = message;
    expect(await codeOf(outbox.mutate("message.send", "email", noConsent, "k"))).toBe(
      "PROVIDER_FAILED",
    );
    expect(await codeOf(outbox.mutate("record.create", "email", message, "k"))).toBe(
      "PROVIDER_FAILED",
    );
    expect(await codeOf(outbox.read("message.read", "email", { message_id: "../x" }))).toBe(
      "PROVIDER_FAILED",
    );
    expect(existsSync(join(layout.workspace, "outbox"))).toBe(false);
  });

  it("refuses an outbox folder that is a symbolic link", async () => {
    mkdirSync(join(layout.outside, "elsewhere"));
    symlinkSync(join(layout.outside, "elsewhere"), join(layout.workspace, "outbox"));
    const outbox = createOutboxProvider({ workspaceRoot: layout.workspace });
    expect(await codeOf(outbox.mutate("message.send", "email", message, "k"))).toBe("PATH_ESCAPE");
    expect(readdirSync(join(layout.outside, "elsewhere"))).toEqual([]);
  });

  it("reads a message it does not hold as not found", async () => {
    const outbox = createOutboxProvider({ workspaceRoot: layout.workspace });
    const id = outboxMessageId("never-sent");
    expect(await outbox.read("message.read", "sms", { message_id: id })).toEqual({
      found: false,
      message_id: id,
      channel: "sms",
    });
  });
});
