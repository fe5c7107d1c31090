import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { createFixtureProvider } from "./fixture-provider.js";
import type { FixtureProvider } from "./fixture-provider.js";
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
  layout = makeTempWorkspace("runx-fixture-provider-");
});
afterEach(() => layout.cleanup());

async function script(provider: FixtureProvider): Promise<void> {
  await provider.mutate("record.create", "contacts", { id: "ada", name: "Ada" }, "k1");
  await provider.mutate("record.create", "contacts", { name: "Anonymous" }, "k2");
  await provider.mutate("record.update", "contacts", { id: "ada", role: "engineer" }, "k3");
  await provider.mutate("message.send", "inbox", { text: "hi" }, "k4");
}

describe("createFixtureProvider", () => {
  it("applies the same operations to the same state, byte for byte", async () => {
    const a = join(layout.runDir, "a.json");
    const b = join(layout.outside, "b.json");
    await script(createFixtureProvider({ name: "crm", stateFile: a }));
    await script(createFixtureProvider({ name: "crm", stateFile: b }));
    expect(readFileSync(a, "utf8")).toBe(readFileSync(b, "utf8"));
  });

  it("reads back stored records and logged effects", async () => {
    const provider = createFixtureProvider({
      name: "crm",
      stateFile: join(layout.runDir, "s.json"),
    });
    await script(provider);
    expect(await provider.read("record.get", "contacts", { id: "ada" })).toEqual({
      target: "contacts",
      found: true,
      record: { id: "ada", name: "Ada", role: "engineer" },
    });
    const list = await provider.read("record.list", "contacts", {});
    expect(list).toMatchObject({ count: 2 });
    const effects = await provider.read("effect.list", "inbox", {});
    expect(effects).toMatchObject({
      count: 1,
      effects: [{ effect_id: "fx_000004", operation: "message.send" }],
    });
  });

  it("returns the first result for a repeated provider key without a second effect", async () => {
    const provider = createFixtureProvider({
      name: "crm",
      stateFile: join(layout.runDir, "s.json"),
    });
    const first = await provider.mutate("record.create", "contacts", { id: "x" }, "same");
    const second = await provider.mutate("record.create", "contacts", { id: "x" }, "same");
    expect(second).toEqual(first);
    expect((await provider.snapshot()).sequence).toBe(1);
  });

  it("fails operations on records that are missing or already exist", async () => {
    const provider = createFixtureProvider({
      name: "crm",
      stateFile: join(layout.runDir, "s.json"),
    });
    await provider.mutate("record.create", "contacts", { id: "x" }, "k1");
    expect(await codeOf(provider.mutate("record.create", "contacts", { id: "x" }, "k2"))).toBe(
      "PROVIDER_FAILED",
    );
    expect(await codeOf(provider.mutate("record.update", "contacts", { id: "y" }, "k3"))).toBe(
      "PROVIDER_FAILED",
    );
    expect((await provider.snapshot()).sequence).toBe(1);
  });

  it("refuses a state file that belongs to another provider", async () => {
    const file = join(layout.runDir, "s.json");
    await createFixtureProvider({ name: "crm", stateFile: file }).mutate("x.y", "t", {}, "k");
    const other = createFixtureProvider({ name: "billing", stateFile: file });
    expect(await codeOf(other.read("record.list", "t", {}))).toBe("PROVIDER_FAILED");
  });
});
