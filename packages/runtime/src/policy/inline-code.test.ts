import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { assertNoInlineCode, detectInlineCode } from "./inline-code.js";

type Row = [argv: string[], expected: { interpreter: string; flag: string } | null];

const hit = (interpreter: string, flag: string): { interpreter: string; flag: string } => ({
  interpreter,
  flag,
});

const ROWS: Row[] = [
  // node, nodejs, bun
  [["node", "-e", "process.exit(0)"], hit("node", "-e")],
  [["node", "--eval", "1"], hit("node", "--eval")],
  [["node", "--eval=1"], hit("node", "--eval=1")],
  [["nodejs", "-p", "1+1"], hit("nodejs", "-p")],
  [["node", "--print", "1"], hit("node", "--print")],
  [["node", "-r", "./setup.js", "-e", "1"], hit("node", "-e")],
  [["node", "--no-warnings", "-pe", "1"], hit("node", "-pe")],
  [["bun", "-e", "1"], hit("bun", "-e")],
  [["node", "script.js"], null],
  [["node", "script.js", "-e", "1"], null],
  [["node", "--", "-e"], null],
  [["node", "-r", "-e", "script.js"], null],
  // deno
  [["deno", "eval", "console.log(1)"], hit("deno", "eval")],
  [["deno", "-q", "eval", "1"], hit("deno", "eval")],
  [["deno", "run", "main.ts"], null],
  // python and pypy
  [["python3", "-c", "print(1)"], hit("python3", "-c")],
  [["python", "-Bc", "print(1)"], hit("python", "-Bc")],
  [["python3.11", "-u", "-c", "1"], hit("python3.11", "-c")],
  [["pypy3", "-c", "1"], hit("pypy3", "-c")],
  [["python3", "-m", "http.server", "-c"], null],
  [["python3", "-W", "ignore", "script.py"], null],
  [["python3", "-Wc", "script.py"], null],
  [["python3", "script.py", "-c", "x"], null],
  // ruby, perl, lua, php
  [["ruby", "-e", "puts 1"], hit("ruby", "-e")],
  [["ruby", "-ne", "print"], hit("ruby", "-ne")],
  [["ruby", "-rtime", "script.rb"], null],
  [["perl", "-e", "print 1"], hit("perl", "-e")],
  [["perl", "-lne", "print"], hit("perl", "-lne")],
  [["perl", "-E", "say 1"], hit("perl", "-E")],
  [["perl", "-Mfeature=say", "script.pl"], null],
  [["lua", "-e", "print(1)"], hit("lua", "-e")],
  [["lua", "script.lua"], null],
  [["php", "-r", "echo 1;"], hit("php", "-r")],
  [["php", "script.php"], null],
  // POSIX shells and fish
  [["sh", "-c", "echo hi"], hit("sh", "-c")],
  [["bash", "-lc", "echo hi"], hit("bash", "-lc")],
  [["bash", "-ec", "echo hi"], hit("bash", "-ec")],
  [["zsh", "-c", "x"], hit("zsh", "-c")],
  [["dash", "-c", "x"], hit("dash", "-c")],
  [["ksh", "-c", "x"], hit("ksh", "-c")],
  [["ash", "-c", "x"], hit("ash", "-c")],
  [["bash", "-o", "pipefail", "-c", "x"], hit("bash", "-c")],
  [["fish", "-c", "echo"], hit("fish", "-c")],
  [["fish", "--command=echo"], hit("fish", "--command=echo")],
  [["sh", "./run.sh"], null],
  [["bash", "-e", "./run.sh"], null],
  [["sh", "./run.sh", "-c"], null],
  // PowerShell and cmd
  [["pwsh", "-Command", "Get-Date"], hit("pwsh", "-Command")],
  [["pwsh", "-c", "1"], hit("pwsh", "-c")],
  [["powershell.exe", "-EncodedCommand", "AAAA"], hit("powershell", "-EncodedCommand")],
  [["pwsh", "-NoProfile", "-enc", "AAAA"], hit("pwsh", "-enc")],
  [["pwsh", "-COMM", "1"], hit("pwsh", "-COMM")],
  [["pwsh", "-File", "script.ps1", "-c"], null],
  [["pwsh", "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", "x.ps1"], null],
  [["cmd", "/c", "dir"], hit("cmd", "/c")],
  [["cmd.exe", "/K", "dir"], hit("cmd", "/K")],
  [["cmd", "/s", "/C", "dir"], hit("cmd", "/C")],
  // wrappers and path prefixes
  [["/usr/bin/python3", "-c", "1"], hit("python3", "-c")],
  [["/usr/local/bin/node", "-e", "1"], hit("node", "-e")],
  [["C:\\Windows\\System32\\cmd.exe", "/c", "dir"], hit("cmd", "/c")],
  [["env", "FOO=bar", "node", "-e", "1"], hit("node", "-e")],
  [["/usr/bin/env", "-i", "A=1", "B=2", "bash", "-c", "x"], hit("bash", "-c")],
  [["env", "-u", "HOME", "python3", "-c", "1"], hit("python3", "-c")],
  [["env", "-S", "node -e 1"], hit("node", "-e")],
  [["env", "env", "X=1", "sh", "-c", "x"], hit("sh", "-c")],
  [["env", "FOO=bar", "node", "script.js"], null],
  // not interpreters at all
  [["git", "commit", "-c", "x"], null],
  [["make", "-e"], null],
  [["env"], null],
];

describe("detectInlineCode", () => {
  it.each(ROWS)("classifies %j as %j", (argv, expected) => {
    const [command, ...args] = argv;
    expect(detectInlineCode(command!, args)).toEqual(expected);
  });
});

describe("assertNoInlineCode", () => {
  it("throws POLICY_DENIED naming the interpreter and flag", () => {
    let caught: unknown;
    try {
      assertNoInlineCode("/usr/bin/env", ["X=1", "python3", "-c", "print(1)"]);
    } catch (error) {
      caught = error;
    }
    expect(isRuntimeError(caught) && caught.code).toBe("POLICY_DENIED");
    expect(isRuntimeError(caught) && caught.details).toMatchObject({
      interpreter: "python3",
      flag: "-c",
    });
  });

  it("accepts a script invocation", () => {
    expect(() => assertNoInlineCode("node", ["run.mjs"])).not.toThrow();
  });
});
