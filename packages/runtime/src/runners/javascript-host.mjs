/**
 * Host process of the javascript runner (see javascript.ts for how it is started).
 *
 * Main thread: reads one JSON request from stdin, runs it in a worker thread with a fixed heap,
 * writes exactly one JSON line to stdout: `{"ok":true,"value":…}` or
 * `{"ok":false,"kind":…,"message":…,"specifier"?:…}`.
 *
 * Worker thread: loads the module closure from the package directory (relative `.mjs`/`.js`
 * imports only), evaluates it as vm.SourceTextModules inside a fresh context holding only the
 * ECMAScript built-ins (clock, randomness, eval and wasm disabled), calls the export, and
 * checks the result is JSON.
 *
 * Only primitives cross between this realm and the module's realm: a host-realm object in the
 * module's hands would lead back to `process` through its constructor chain.
 *
 * Plain JavaScript on purpose: it must run under Node 20 from source (no type stripping) and
 * imports nothing but node: built-ins, so the build may copy or bundle it unchanged.
 */
import process from "node:process";
import { setImmediate } from "node:timers";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

const MAX_REQUEST_BYTES = 6 * 1024 * 1024;

/** Runs inside the module's context before any module code; returns the bridge. */
const SETUP_SOURCE = String.raw`(() => {
  "use strict";
  const G = globalThis;
  const { apply, construct, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, ownKeys } = Reflect;
  const { freeze } = Object;
  const { stringify, parse } = JSON;
  const { isArray } = Array;
  const { isFinite } = Number;
  const ObjectPrototype = Object.prototype;
  const RealDate = G.Date;
  const RealError = G.Error;
  const RealTypeError = G.TypeError;
  const PromiseCtor = G.Promise;
  const promiseThen = PromiseCtor.prototype.then;
  const promiseResolve = PromiseCtor.resolve;
  const toText = G.String;

  const unavailable = (what) => new RealTypeError(what + " is not available to runx javascript modules: they get no clock or randomness; pass the value as an input");
  const refuse = (what) => function () { throw unavailable(what); };

  // Date: explicit values only; anything that would read the clock throws.
  const Date = function Date(...args) {
    if (new.target === undefined) throw unavailable("Date()");
    if (args.length === 0) throw unavailable("new Date() without a value");
    return construct(RealDate, args, new.target);
  };
  defineProperty(Date, "prototype", { value: RealDate.prototype, writable: false });
  defineProperty(RealDate.prototype, "constructor", { value: Date, writable: true, configurable: true });
  Date.UTC = RealDate.UTC;
  Date.parse = RealDate.parse;
  Date.now = refuse("Date.now()");
  defineProperty(G, "Date", { value: Date, writable: true, configurable: true });
  defineProperty(G.Math, "random", { value: refuse("Math.random()"), writable: true, configurable: true });

  // Intl formatting without a date formats "now".
  const dtf = G.Intl.DateTimeFormat.prototype;
  const formatGetter = getOwnPropertyDescriptor(dtf, "format").get;
  defineProperty(dtf, "format", {
    configurable: true,
    get() {
      const bound = apply(formatGetter, this, []);
      return (date) => {
        if (date === undefined) throw unavailable("Intl.DateTimeFormat format() without a date");
        return bound(date);
      };
    },
  });
  const formatToParts = dtf.formatToParts;
  defineProperty(dtf, "formatToParts", {
    configurable: true,
    writable: true,
    value: function formatToParts(date) {
      if (date === undefined) throw unavailable("Intl.DateTimeFormat formatToParts() without a date");
      return apply(formatToParts, this, [date]);
    },
  });

  // Sources of asynchronous wake-ups and non-determinism.
  delete G.WeakRef;
  delete G.FinalizationRegistry;
  delete G.WebAssembly;
  delete G.Atomics.waitAsync;
  const quiet = () => undefined;
  defineProperty(G, "console", {
    value: freeze({ log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet }),
    writable: true,
    configurable: true,
  });

  // The host awaits promises of this realm; their "then" must stay the intrinsic one.
  for (const [target, key] of [[PromiseCtor.prototype, "then"], [PromiseCtor.prototype, "constructor"], [PromiseCtor, Symbol.species]]) {
    const descriptor = getOwnPropertyDescriptor(target, key);
    if ("value" in descriptor) descriptor.writable = false;
    descriptor.configurable = false;
    defineProperty(target, key, descriptor);
  }

  function describe(error) {
    try {
      if (error !== null && (typeof error === "object" || typeof error === "function")) {
        const message = error.message;
        const name = error.name;
        if (typeof message === "string") return (typeof name === "string" && name !== "" ? name + ": " : "") + message;
      }
      return "non-error value thrown: " + toText(error);
    } catch {
      return "an error that cannot be described was thrown";
    }
  }

  function jsonProblem(value, path, depth, ancestors) {
    if (value === null) return undefined;
    const type = typeof value;
    if (type === "string" || type === "boolean") return undefined;
    if (type === "number") return isFinite(value) ? undefined : path + " is " + toText(value);
    if (type !== "object") return path + " is a " + type;
    if (depth > 256) return path + " nests deeper than 256 levels";
    if (ancestors.indexOf(value) !== -1) return path + " is a circular reference";
    ancestors.push(value);
    try {
      if (isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const item = value[i];
          if (item === undefined) return path + "[" + i + "] is undefined";
          const problem = jsonProblem(item, path + "[" + i + "]", depth + 1, ancestors);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      const proto = getPrototypeOf(value);
      if (proto !== ObjectPrototype && proto !== null) return path + " is not a plain object";
      for (const key of ownKeys(value)) {
        if (typeof key !== "string") continue;
        const descriptor = getOwnPropertyDescriptor(value, key);
        if (descriptor === undefined || !descriptor.enumerable) continue;
        const item = value[key];
        if (item === undefined) continue;
        const problem = jsonProblem(item, path + "." + key, depth + 1, ancestors);
        if (problem !== undefined) return problem;
      }
      return undefined;
    } finally {
      ancestors.pop();
    }
  }

  let state;
  const fail = (kind, message) => { state = stringify({ ok: false, kind, message }); };
  function settleValue(value) {
    try {
      if (value === undefined) return fail("output_invalid", "the export returned undefined; return a JSON value");
      const problem = jsonProblem(value, "result", 0, []);
      if (problem !== undefined) return fail("output_invalid", "the export's result is not JSON: " + problem);
      state = '{"ok":true,"value":' + stringify(value) + "}";
    } catch (error) {
      fail("output_invalid", "the export's result cannot be serialised: " + describe(error));
    }
  }
  function settleError(error) {
    fail("thrown", describe(error));
  }
  function invoke(fn, inputsJson, environmentJson) {
    const inputs = parse(inputsJson);
    const environment = freeze(parse(environmentJson));
    let result;
    try {
      result = apply(fn, undefined, [inputs, freeze({ environment })]);
    } catch (error) {
      return settleError(error);
    }
    apply(promiseThen, apply(promiseResolve, PromiseCtor, [result]), [settleValue, settleError]);
  }
  return freeze({
    invoke,
    poll: () => state,
    makeError: (message) => new RealError(message),
    describe,
  });
})()`;

class Refusal extends Error {
  constructor(message, specifier) {
    super(message);
    this.specifier = specifier;
  }
}

/** Loads and evaluates the module closure, then calls the export. Returns the protocol line. */
async function evaluateRequest(request) {
  const vm = await import("node:vm");
  const fs = await import("node:fs");
  const path = await import("node:path");

  const root = fs.realpathSync(request.packageDir);
  const inside = (p) => {
    const rel = path.relative(root, p);
    return rel !== "" && rel !== ".." && !rel.startsWith(".." + path.sep) && !path.isAbsolute(rel);
  };
  const context = vm.createContext(Object.create(null), {
    name: "runx-javascript",
    codeGeneration: { strings: false, wasm: false },
  });
  const bridge = vm.runInContext(SETUP_SOURCE, context, { filename: "runx-setup.js" });
  const { invoke, poll, makeError, describe } = bridge;

  let dynamicImport;
  let sourceBytes = 0;
  const modules = new Map();
  const files = new Map();

  const load = (file, specifier) => {
    if (!/\.(mjs|js)$/.test(file))
      throw new Refusal(`import ${specifier} is not a .mjs or .js module`, specifier);
    if (!inside(file))
      throw new Refusal(`import ${specifier} resolves outside the package`, specifier);
    let real;
    try {
      real = fs.realpathSync(file);
    } catch {
      throw new Refusal(`import ${specifier} does not exist in the package`, specifier);
    }
    if (!inside(real))
      throw new Refusal(`import ${specifier} resolves outside the package`, specifier);
    const cached = modules.get(real);
    if (cached !== undefined) return cached;
    const source = fs.readFileSync(real, "utf8");
    sourceBytes += Buffer.byteLength(source);
    if (sourceBytes > request.limits.sourceBytes) {
      throw new Refusal(
        `the module closure exceeds ${request.limits.sourceBytes} bytes`,
        specifier,
      );
    }
    const identifier = path.relative(root, real).split(path.sep).join("/");
    let module;
    try {
      module = new vm.SourceTextModule(source, {
        context,
        identifier,
        importModuleDynamically: (target) => {
          dynamicImport ??= String(target);
          // An error of the module's own realm: a host error would expose the host.
          throw makeError(
            `dynamic import() is not allowed in runx javascript modules: ${String(target)}`,
          );
        },
      });
    } catch (error) {
      throw new Refusal(`${identifier} does not compile: ${describe(error)}`, specifier);
    }
    modules.set(real, module);
    files.set(module, real);
    return module;
  };

  const linker = (specifier, referrer, extra) => {
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
      throw new Refusal(
        `import ${specifier} is not allowed: only relative imports inside the package`,
        specifier,
      );
    }
    const attributes = extra?.attributes ?? extra?.assert ?? {};
    if (Object.keys(attributes).length > 0)
      throw new Refusal(`import ${specifier} uses import attributes`, specifier);
    return load(path.resolve(path.dirname(files.get(referrer)), specifier), specifier);
  };

  const refused = (error) =>
    JSON.stringify({
      ok: false,
      kind: "module_invalid",
      message: error.message,
      specifier: error.specifier,
    });

  let entry;
  try {
    entry = load(path.resolve(root, request.module), request.module);
    await entry.link(linker);
  } catch (error) {
    if (error instanceof Refusal) return refused(error);
    return JSON.stringify({ ok: false, kind: "module_invalid", message: describe(error) });
  }
  const dynamicRefusal = () =>
    refused(
      new Refusal(
        `dynamic import() is not allowed in runx javascript modules: ${dynamicImport}`,
        dynamicImport,
      ),
    );

  try {
    await entry.evaluate();
  } catch (error) {
    if (dynamicImport !== undefined) return dynamicRefusal();
    return JSON.stringify({ ok: false, kind: "thrown", message: describe(error) });
  }
  const fn = entry.namespace[request.exportName];
  if (typeof fn !== "function") {
    return JSON.stringify({
      ok: false,
      kind: "module_invalid",
      message: `${request.module} has no exported function ${request.exportName}`,
    });
  }
  invoke(fn, request.inputsJson, JSON.stringify(request.environment));
  // Modules have no timers or I/O, so once the microtask queue drains nothing can settle the
  // promise any more; a few macrotask turns are plenty.
  for (let turn = 0; turn < 4 && poll() === undefined; turn++)
    await new Promise((r) => setImmediate(r));
  if (dynamicImport !== undefined) return dynamicRefusal();
  const line = poll();
  if (line === undefined) {
    return JSON.stringify({
      ok: false,
      kind: "never_settled",
      message: "the export returned a promise that never settles",
    });
  }
  if (Buffer.byteLength(line) > request.limits.outputBytes) {
    return JSON.stringify({
      ok: false,
      kind: "output_too_large",
      message: `the result exceeds the ${request.limits.outputBytes}-byte worker output limit`,
    });
  }
  return line;
}

async function readStdin() {
  const chunks = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    total += chunk.length;
    if (total > MAX_REQUEST_BYTES) throw new Error("request exceeds the host limit");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function respond(line) {
  process.stdout.write(`${line}\n`);
}

async function main() {
  let request;
  try {
    request = JSON.parse(await readStdin());
  } catch (error) {
    respond(
      JSON.stringify({ ok: false, kind: "host_error", message: `bad request: ${error.message}` }),
    );
    return;
  }
  const worker = new Worker(new URL(import.meta.url), {
    workerData: request,
    env: {},
    stdout: true,
    stderr: true,
    resourceLimits: {
      maxOldGenerationSizeMb: request.limits.heapMb,
      maxYoungGenerationSizeMb: Math.max(4, Math.floor(request.limits.heapMb / 4)),
      stackSizeMb: request.limits.stackMb,
    },
  });
  worker.stdout.resume();
  worker.stderr.resume();
  const line = await new Promise((resolve) => {
    worker.once("message", resolve);
    worker.once("error", (error) => {
      const memory = error?.code === "ERR_WORKER_OUT_OF_MEMORY";
      resolve(
        JSON.stringify({
          ok: false,
          kind: memory ? "memory_limit" : "host_error",
          message: memory
            ? `the module exceeded the ${request.limits.heapMb} MB heap limit`
            : String(error?.message),
        }),
      );
    });
    worker.once("exit", (code) =>
      resolve(
        JSON.stringify({
          ok: false,
          kind: "host_error",
          message: `worker exited with code ${code}`,
        }),
      ),
    );
  });
  await worker.terminate();
  respond(line);
}

if (isMainThread) {
  await main();
} else {
  let line;
  try {
    line = await evaluateRequest(workerData);
  } catch (error) {
    line = JSON.stringify({
      ok: false,
      kind: "host_error",
      message: String(error?.message ?? error),
    });
  }
  parentPort.postMessage(line);
}
