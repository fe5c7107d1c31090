import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_AGENT_BASE_URL,
  SECRET_MASK,
  getUserConfigEntry,
  listUserConfig,
  loadAgentSettings,
  resolveConfigKey,
  setUserConfigValue,
  unsetUserConfigValue,
} from "./config.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "runx-home-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const code = (c: string): Error => expect.objectContaining({ code: c }) as Error;
const KEY = "sk-test-0123456789abcdef";

describe("user config", () => {
  it("maps short aliases to fully-qualified keys and refuses unknown keys", () => {
    expect(resolveConfigKey("provider")).toBe("agent.provider");
    expect(resolveConfigKey("api-key")).toBe("agent.api_key");
    expect(resolveConfigKey("agent.model")).toBe("agent.model");
    expect(() => resolveConfigKey("agent.temperature")).toThrow(code("CONFIG_INVALID"));
  });

  it("stores values in config.json with mode 0600 and keeps keys it does not own", async () => {
    writeFileSync(join(home, "config.json"), JSON.stringify({ public_token_profile: "x" }));
    await setUserConfigValue(home, "agent.provider", "openai");
    await setUserConfigValue(home, "agent.api_key", KEY);
    expect(statSync(join(home, "config.json")).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    expect(stored).toEqual({
      public_token_profile: "x",
      agent: { provider: "openai", api_key: KEY },
    });
  });

  it("masks the API key in get and list and shows whether it is set", async () => {
    expect((await getUserConfigEntry(home, "agent.api_key")).set).toBe(false);
    const entry = await setUserConfigValue(home, "agent.api_key", KEY);
    expect(entry).toMatchObject({ key: "agent.api_key", set: true, value: SECRET_MASK });
    expect(await getUserConfigEntry(home, "agent.api_key")).toMatchObject({
      set: true,
      value: SECRET_MASK,
    });
    const listed = await listUserConfig(home);
    expect(JSON.stringify(listed)).not.toContain(KEY);
    expect(listed.map((e) => [e.key, e.set])).toEqual([
      ["agent.provider", false],
      ["agent.model", false],
      ["agent.base_url", false],
      ["agent.api_key", true],
    ]);
    expect(listed[2]?.default).toBe(DEFAULT_AGENT_BASE_URL);
  });

  it("refuses plaintext http base URLs unless the host is loopback", async () => {
    await expect(
      setUserConfigValue(home, "agent.base_url", "http://api.example.com/v1"),
    ).rejects.toThrow(code("CONFIG_INVALID"));
    await expect(
      setUserConfigValue(home, "agent.base_url", "https://user:pw@api.example.com/v1"),
    ).rejects.toThrow(code("CONFIG_INVALID"));
    const local = await setUserConfigValue(home, "agent.base_url", "http://127.0.0.1:8080/v1/");
    expect(local.value).toBe("http://127.0.0.1:8080/v1");
    await setUserConfigValue(home, "agent.base_url", "http://[::1]:9/v1");
    await setUserConfigValue(home, "agent.base_url", "https://api.example.com/v1");
  });

  it("refuses an empty value and an API key with whitespace without echoing it", async () => {
    await expect(setUserConfigValue(home, "agent.model", "  ")).rejects.toThrow(
      code("CONFIG_INVALID"),
    );
    const error = await setUserConfigValue(home, "agent.api_key", "sk secret").catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CONFIG_INVALID" });
    expect(JSON.stringify(error)).not.toContain("sk secret");
  });

  it("unsets a value and reports whether it was set", async () => {
    await setUserConfigValue(home, "agent.model", "gpt-x");
    expect(await unsetUserConfigValue(home, "agent.model")).toBe(true);
    expect(await unsetUserConfigValue(home, "agent.model")).toBe(false);
  });

  it("refuses a malformed config.json with CONFIG_INVALID", async () => {
    writeFileSync(join(home, "config.json"), "{ not json");
    await expect(listUserConfig(home)).rejects.toThrow(code("CONFIG_INVALID"));
  });
});

describe("loadAgentSettings", () => {
  it("names every missing setting with AGENT_NOT_CONFIGURED", async () => {
    const error = await loadAgentSettings(home).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "AGENT_NOT_CONFIGURED",
      details: { missing: ["agent.provider", "agent.model", "agent.api_key"] },
    });
  });

  it("defaults the endpoint for openai only; other providers must name their base_url", async () => {
    await setUserConfigValue(home, "agent.provider", "openai");
    await setUserConfigValue(home, "agent.model", "gpt-5.1");
    await setUserConfigValue(home, "agent.api_key", KEY);
    expect(await loadAgentSettings(home)).toEqual({
      provider: "openai",
      model: "gpt-5.1",
      apiKey: KEY,
      baseUrl: DEFAULT_AGENT_BASE_URL,
    });
    await setUserConfigValue(home, "agent.provider", "openrouter");
    await expect(loadAgentSettings(home)).rejects.toThrow(code("AGENT_NOT_CONFIGURED"));
    await setUserConfigValue(home, "agent.base_url", "https://openrouter.example/api/v1");
    expect((await loadAgentSettings(home)).baseUrl).toBe("https://openrouter.example/api/v1");
  });
});
