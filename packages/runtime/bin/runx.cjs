#!/usr/bin/env node
// The `runx` executable.
// Help and version are answered by dist/help.cjs, the command catalog alone. Everything else
// runs dist/cli/main.js, whose chunks (one per command and per lazily loaded subsystem) are
// compiled through V8 code caches stored beside them: Node 20 has no module compile cache,
// and compiling the runtime on every start would cost more than the work of a typical
// command. V8 rejects a cache made by another V8 version or for other source; such a cache is
// rebuilt (when dist/ is writable) after the command finishes.
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
  compileWithCodeCache(path.join(dist, "cli") + path.sep);
  require(path.join(dist, "cli", "main.js")).main(argv);
}

/** Compiles the CommonJS files under `dir` through per-file V8 code caches. */
function compileWithCodeCache(dir) {
  const stale = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (!filename.startsWith(dir)) return compile.call(this, content, filename);
    const cacheFile = `${filename}.${process.version}-${process.arch}.v8cache`;
    let cachedData;
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(Module.wrap(content), {
      filename,
      ...(cachedData !== undefined ? { cachedData } : {}),
    });
    if (cachedData === undefined || script.cachedDataRejected === true) {
      stale.push({ script, cacheFile });
    }
    const require = Module.createRequire(filename);
    return script
      .runInThisContext()
      .call(this.exports, this.exports, require, this, filename, path.dirname(filename));
  };
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
}
