import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError, type RuntimeError } from "../errors.js";
import { waitFor } from "../process/test-support.js";
import { runJavascript, type JavascriptSpec, type RunJavascriptOptions } from "./javascript.js";

let root: string;
let pkg: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "runx-js-")));
  pkg = join(root, "pkg");
  mkdirSync(pkg);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function file(relPath: string, body: string): void {
  const path = join(pkg, relPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
}

function run(
  spec: JavascriptSpec,
  extra: Partial<RunJavascriptOptions> = {},
): ReturnType<typeof runJavascript> {
  return runJavascript({ spec, packageDir: pkg, inputs: {}, baseEnv: {}, ...extra });
}

/** Runs `export function main(inputs, ctx) { <body> }` from main.mjs. */
function runBody(
  body: string,
  extra: Partial<RunJavascriptOptions> = {},
): ReturnType<typeof runJavascript> {
  file("main.mjs", `export function main(inputs, ctx) {\n${body}\n}\n`);
  return run({ module: "main.mjs", export: "main" }, extra);
}

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (error) {
    if (isRuntimeError(error)) return error;
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

describe("runJavascript", () => {
  it("calls the default export with the inputs and returns its object as the output", async () => {
    file(
      "main.mjs",
      "export default async function (inputs) { return { greeting: `hello ${inputs.name}` }; }\n",
    );
    const result = await run({ module: "main.mjs" }, { inputs: { name: "ada" } });
    expect(result.disposition).toBe("closed");
    expect(result.reasonCode).toBe("process_closed");
    expect(result.output).toEqual({ greeting: "hello ada" });
    expect(result.exportName).toBe("default");
  });

  it("wraps a non-object JSON result as {result}", async () => {
    const result = await runBody("return [1, 'two', null];");
    expect(result.output).toEqual({ result: [1, "two", null] });
  });

  it("loads a relative sibling import inside the package", async () => {
    file("lib/math.mjs", "export const twice = (n) => n * 2;\n");
    file(
      "main.mjs",
      "import { twice } from './lib/math.mjs';\nexport const main = (inputs) => ({ n: twice(inputs.n) });\n",
    );
    const result = await run({ module: "main.mjs", export: "main" }, { inputs: { n: 21 } });
    expect(result.output).toEqual({ n: 42 });
  });

  it("receives only the declared environment, frozen", async () => {
    const result = await runBody(
      "let mutable = true; try { ctx.environment.X = 1; } catch { mutable = false; }\nreturn { env: ctx.environment, mutable, frozen: Object.isFrozen(ctx) };",
      { baseEnv: { SERVICE_URL: "https://svc.invalid", SECRET_X: "hunter2", PATH: "/bin" } },
    );
    expect(result.output).toEqual({ env: {}, mutable: false, frozen: true });
    file("main.mjs", "export const main = (_, { environment }) => ({ environment });\n");
    const declared = await run(
      { module: "main.mjs", export: "main", environment: { optional: ["SERVICE_URL", "ABSENT"] } },
      { baseEnv: { SERVICE_URL: "https://svc.invalid", SECRET_X: "hunter2" } },
    );
    expect(declared.output).toEqual({ environment: { SERVICE_URL: "https://svc.invalid" } });
  });

  it("fails with ENV_MISSING when a required variable is not set", async () => {
    file("main.mjs", "export default () => ({});\n");
    const error = await refusal(run({ module: "main.mjs", environment: { required: ["NEEDED"] } }));
    expect(error.code).toBe("ENV_MISSING");
  });

  it.each([
    ["process", "return { pid: process.pid };", /process is not defined/],
    ["require", "return require('node:fs');", /require is not defined/],
    ["fetch", "return fetch('https://example.invalid');", /fetch is not defined/],
    ["setTimeout", "setTimeout(() => {}, 1); return {};", /setTimeout is not defined/],
    ["Date.now", "return { now: Date.now() };", /Date\.now\(\) is not available/],
    [
      "new Date()",
      "return { now: new Date().toISOString() };",
      /new Date\(\) without a value is not available/,
    ],
    ["Math.random", "return { r: Math.random() };", /Math\.random\(\) is not available/],
    ["crypto", "return crypto.randomUUID();", /crypto is not defined/],
    ["performance", "return performance.now();", /performance is not defined/],
    ["eval", "return eval('1 + 1');", /Code generation from strings disallowed/],
  ])("fails with a clear message when the module reaches for %s", async (_name, body, message) => {
    const result = await runBody(body);
    expect(result.disposition).toBe("failed");
    expect(result.failureKind).toBe("thrown");
    expect(result.summary).toMatch(message);
  });

  it("still allows date arithmetic on explicit values", async () => {
    const result = await runBody("return { iso: new Date(Date.UTC(2020, 0, 2)).toISOString() };");
    expect(result.output).toEqual({ iso: "2020-01-02T00:00:00.000Z" });
  });

  it("cannot reach the host through the constructor chain", async () => {
    const result = await runBody(
      "try { return { leaked: typeof globalThis.constructor.constructor('return process')() }; } catch (e) { return { blocked: e.constructor === EvalError } }",
    );
    expect(result.output).toEqual({ blocked: true });
  });

  it("reports an error thrown by the module as failed with its message", async () => {
    const result = await runBody("throw new RangeError('amount must be positive');");
    expect(result.disposition).toBe("failed");
    expect(result.summary).toBe("RangeError: amount must be positive");
  });

  it("fails a result that is not JSON", async () => {
    const fn = await runBody("return { at: new Map() };");
    expect(fn.failureKind).toBe("output_invalid");
    expect(fn.summary).toMatch(/result\.at is not a plain object/);
    const none = await runBody("return undefined;");
    expect(none.failureKind).toBe("output_invalid");
  });

  it("fails a non-object result when the runner declares outputs", async () => {
    file("main.mjs", "export default () => 42;\n");
    const result = await run({ module: "main.mjs", outputs: { n: "number" } });
    expect(result.disposition).toBe("failed");
  });

  it("times out an infinite loop within the wall-clock limit", async () => {
    file("main.mjs", "export default () => { for (;;) {} };\n");
    const result = await run({ module: "main.mjs", timeout_seconds: 1 });
    expect(result.disposition).toBe("timed_out");
    expect(result.reasonCode).toBe("process_timed_out");
    expect(result.durationMs).toBeLessThan(3000);
  });

  it("fails a memory bomb at the worker heap limit", async () => {
    const result = await runBody(
      "const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length));",
    );
    expect(result.disposition).toBe("failed");
    expect(result.failureKind).toBe("memory_limit");
  });

  it("reports killed when the abort signal fires", async () => {
    file("main.mjs", "export default () => { for (;;) {} };\n");
    const controller = new AbortController();
    const started = Date.now();
    const running = run({ module: "main.mjs", timeout_seconds: 30 }, { signal: controller.signal });
    await waitFor(() => Date.now() - started > 300, 5000, "the worker to start");
    controller.abort();
    const result = await running;
    expect(result.disposition).toBe("killed");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each([
    ["a bare import", "import _ from 'lodash';", "lodash"],
    ["a node: import", "import fs from 'node:fs';", "node:fs"],
    ["an import outside the package", "import x from '../outside.mjs';", "../outside.mjs"],
    ["a missing sibling", "import x from './missing.mjs';", "./missing.mjs"],
  ])("refuses %s with MODULE_INVALID naming the specifier", async (_name, statement, specifier) => {
    writeFileSync(join(root, "outside.mjs"), "export default 1;\n");
    file("main.mjs", `${statement}\nexport default () => ({});\n`);
    const error = await refusal(run({ module: "main.mjs" }));
    expect(error.code).toBe("MODULE_INVALID");
    expect(error.details.specifier).toBe(specifier);
  });

  it("refuses a dynamic import with MODULE_INVALID even when the module catches it", async () => {
    file(
      "main.mjs",
      "export default async () => { try { await import('node:fs'); } catch { } return {}; };\n",
    );
    const error = await refusal(run({ module: "main.mjs" }));
    expect(error.code).toBe("MODULE_INVALID");
    expect(error.details.specifier).toBe("node:fs");
  });

  it("refuses a module outside the package, directly or through a symlink", async () => {
    writeFileSync(join(root, "outside.mjs"), "export default () => ({});\n");
    expect((await refusal(run({ module: "../outside.mjs" }))).code).toBe("PATH_ESCAPE");
    symlinkSync(join(root, "outside.mjs"), join(pkg, "link.mjs"));
    expect((await refusal(run({ module: "link.mjs" }))).code).toBe("PATH_ESCAPE");
    expect((await refusal(run({ module: join(root, "outside.mjs") }))).code).toBe("MODULE_INVALID");
  });

  it("refuses a module that is not .mjs/.js, does not exist, or lacks the export", async () => {
    file("main.ts", "export default () => ({});\n");
    expect((await refusal(run({ module: "main.ts" }))).code).toBe("MODULE_INVALID");
    expect((await refusal(run({ module: "nope.mjs" }))).code).toBe("MODULE_INVALID");
    file("main.mjs", "export const other = () => ({});\n");
    expect((await refusal(run({ module: "main.mjs", export: "missing" }))).code).toBe(
      "MODULE_INVALID",
    );
  });

  it("rejects timeout_seconds outside 1–30", async () => {
    file("main.mjs", "export default () => ({});\n");
    expect((await refusal(run({ module: "main.mjs", timeout_seconds: 31 }))).code).toBe(
      "PACKAGE_INVALID",
    );
  });
});
