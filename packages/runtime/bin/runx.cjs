#!/usr/bin/env node
// The `runx` executable.
// Help and version are answered by dist/help.cjs, the command catalog alone. Everything else
// runs dist/cli/main.js, whose chunks (one per command and per lazily loaded subsystem, see
// scripts/build.mjs) are loaded here rather than through Node's module loader:
// - each chunk is one function expression `(exports, require, module, __filename,
//   __dirname) => …`, compiled through a V8 code cache stored beside it. Node 20 has no module
//   compile cache, and compiling the runtime on every start would cost more than the work of a
//   typical command. V8 rejects a cache made by another V8 version or for other source; such a
//   cache is rebuilt (when dist/ is writable) after the command finishes;
// - a chunk's `require("./chunk-….js")` goes straight to its sibling file. Node's resolver
//   (path resolution, stat calls, package scope lookups per require) cost a fixed ~0.3 ms per
//   chunk, and a command loads dozens. Everything else a chunk requires (Node built-ins,
//   packages such as better-sqlite3) goes through Node's own `require`.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

const dist = path.join(__dirname, "..", "dist");
const argv = process.argv.slice(2);
const help = require(path.join(dist, "help.cjs")).helpOnly(argv);
if (help !== undefined) {
  process.exitCode = help;
} else {
  loadChunks(path.join(dist, "cli")).main(argv);
}

/** Loads `main.js` of the chunk directory `dir` and, on demand, the chunks it requires. */
function loadChunks(dir) {
  const cacheSuffix = `.${process.version}-${process.arch}.v8cache`;
  const nodeRequire = Module.createRequire(path.join(dir, "main.js"));
  const modules = new Map();
  const stale = [];

  const load = (name) => {
    const loaded = modules.get(name);
    if (loaded !== undefined) return loaded.exports;
    const filename = path.join(dir, name);
    // The build emits ASCII only (esbuild escapes the rest), so latin1 decodes it exactly and
    // gives V8 a one-byte string.
    const source = fs.readFileSync(filename, "latin1");
    const cacheFile = filename + cacheSuffix;
    let cachedData;
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(source, {
      filename,
      ...(cachedData !== undefined ? { cachedData } : {}),
    });
    if (cachedData === undefined || script.cachedDataRejected === true) {
      stale.push({ script, cacheFile });
    }
    // Registered before it runs, as Node does, so a cycle sees the partial exports.
    const module = { exports: {} };
    modules.set(name, module);
    try {
      script
        .runInThisContext()
        .call(module.exports, module.exports, chunkRequire, module, filename, dir);
    } catch (error) {
      modules.delete(name);
      throw error;
    }
    return module.exports;
  };

  function chunkRequire(id) {
    return /^\.\/[\w.-]+\.js$/.test(id) ? load(id.slice(2)) : nodeRequire(id);
  }
  chunkRequire.resolve = nodeRequire.resolve;

  // Written at exit so that functions compiled while running are in the caches too.
  process.once("exit", () => {
    for (const { script, cacheFile } of stale) {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o644 });
        fs.renameSync(tmp, cacheFile);
      } catch {
        try {
          fs.rmSync(tmp, { force: true });
        } catch {
          // dist/ is read-only: run without a cache.
        }
      }
    }
  });
  return load("main.js");
}
