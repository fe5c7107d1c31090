import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { isatty } from "node:tty";
import { afterEach, describe, expect, it } from "vitest";
import { readCliEnv } from "./env.js";

const saved = { HOME: process.env.HOME, RUNX_HOME: process.env.RUNX_HOME };

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("readCliEnv", () => {
  it("puts the runx home at RUNX_HOME when set", () => {
    process.env.RUNX_HOME = "/srv/runx-home";
    process.env.HOME = "/home/someone";
    expect(readCliEnv().runxHome).toBe(resolve("/srv/runx-home"));
  });

  it("puts it under $HOME otherwise, as os.homedir() reads it", () => {
    delete process.env.RUNX_HOME;
    process.env.HOME = "/home/someone";
    expect(homedir()).toBe("/home/someone");
    expect(readCliEnv().runxHome).toBe(join("/home/someone", ".runx"));
  });

  it("asks the password database when HOME is unset", () => {
    delete process.env.RUNX_HOME;
    delete process.env.HOME;
    expect(readCliEnv().runxHome).toBe(join(homedir(), ".runx"));
    expect(homedir()).not.toBe("");
  });

  it("answers the terminal questions as isatty() does, colours only on a terminal", () => {
    const env = readCliEnv();
    expect(env.stdoutIsTTY).toBe(isatty(1));
    expect(env.stderrIsTTY).toBe(isatty(2));
    if (!isatty(1)) expect(env.color).toBe(false);
  });
});
