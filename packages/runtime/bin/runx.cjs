#!/usr/bin/env node
// The `runx` executable.
// Help and version are answered by dist/help.cjs, the command catalog alone. Everything else
// runs dist/cli.cjs, compiled through a V8 code cache stored beside it: Node 20 has no module
// compile cache, and compiling the bundled runtime on every start would cost more than the
// work of a typical command. V8 rejects a cache made by another V8 version or for other
// source; the cache is then rebuilt (when dist/ is writable) after the command finishes.
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
  loadCli().main(argv);
}

function loadCli() {
  const file = path.join(dist, "cli.cjs");
  const cacheFile = `${file}.${process.version}-${process.arch}.v8cache`;
  const source = fs.readFileSync(file, "utf8");
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // Written at exit so that functions compiled while running are in the cache too.
    process.once("exit", () => {
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
    });
  }
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, dist);
  return mod.exports;
}
