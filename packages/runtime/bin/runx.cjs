#!/usr/bin/env node
// The `runx` executable.
// Help and version are answered by dist/help.cjs, the command catalog alone. Everything else
// runs dist/cli/main.js (dist/cli/build.json names the build and its commands), whose chunks (one per command and per lazily loaded subsystem, see
// scripts/build.mjs) are loaded here rather than through Node's module loader:
// - each chunk file is one function expression `(exports, require, module, __filename,
//   __dirname) => …`; a chunk's `require("./chunk-….js")` goes straight to its sibling, and
//   everything else it requires (Node built-ins, packages such as better-sqlite3) goes through
//   Node's own `require`. Node's resolver cost a fixed ~0.3 ms per chunk, and a command loads
//   dozens;
// - code is compiled through V8 code caches stored beside it (Node 20 has no module compile
//   cache, and compiling the runtime on every start would cost more than the work of a
//   typical command). V8 rejects a cache made by another V8 version or for other source; such
//   a cache is rebuilt after the command finishes;
// - reading dozens of files (and their caches) costs more than the code in them, so the chunks
//   a command used are kept together in one pack per command, `pack-<command>.js`, written
//   after a run whose chunks the pack did not hold (or when most of the pack went unused), and
//   compiled through its own code cache. A pack names the build it belongs to; a pack of
//   another build is ignored. Packs and caches are written only when dist/ is writable, always
//   through a temporary file and a rename, so concurrent runs never see a partial file.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const dist = path.join(__dirname, "..", "dist");
const argv = process.argv.slice(2);
// Only these argument lists can ask for help or the version (see src/cli/help-main.ts).
const [first] = argv;
const maybeHelp =
  first === undefined ||
  ["--help", "-h", "help", "--version", "-V"].includes(first) ||
  argv.includes("--help") ||
  argv.includes("-h");
const helpExit = maybeHelp ? require(path.join(dist, "help.cjs")).helpOnly(argv) : undefined;
if (helpExit !== undefined) {
  process.exitCode = helpExit;
} else {
  const cli = path.join(dist, "cli");
  const build = JSON.parse(fs.readFileSync(path.join(cli, "build.json"), "utf8"));
  const command = build.commands.includes(first) ? first : "other";
  loadChunks(cli, build.build_id, command).main(argv);
}

/**
 * Loads `main.js` of the chunk directory `dir` and, on demand, the chunks it requires;
 * `command` (a known command name or "other") names the pack.
 */
function loadChunks(dir, buildId, command) {
  const versionTag = `${process.version}-${process.arch}`;
  // This file's own require: bin/ and the chunk directory share the package's node_modules
  // lookup, and `node:module` (for createRequire) would load Node's ES module loader.
  const nodeRequire = require;
  const modules = new Map();
  /** Sources of the chunks read from their own files this run (for a new pack). */
  const sources = new Map();
  /** Scripts whose cache must be (re)written at exit. */
  const stale = [];

  const packName = `pack-${command}`;
  const pack = readPack(dir, packName, buildId, versionTag);
  if (pack !== undefined && pack.stale) stale.push(pack);

  const load = (name) => {
    const loaded = modules.get(name);
    if (loaded !== undefined) return loaded.exports;
    let factory = pack?.factories[name];
    if (factory === undefined) {
      const filename = path.join(dir, name);
      // The build emits ASCII only, so latin1 decodes it exactly (a one-byte string for V8).
      const source = fs.readFileSync(filename, "latin1");
      sources.set(name, source);
      const cacheFile = `${filename}.${versionTag}.v8cache`;
      const script = compile(source, filename, cacheFile);
      if (script.stale) stale.push(script);
      factory = script.script.runInThisContext();
    }
    // Registered before it runs, as Node does, so a cycle sees the partial exports.
    const module = { exports: {} };
    modules.set(name, module);
    try {
      factory.call(module.exports, module.exports, chunkRequire, module, path.join(dir, name), dir);
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

  // At exit, so that functions compiled while running are in the caches too.
  process.once("exit", () => {
    // Repack when this run needed chunks the pack lacks (the pack grows to the union of what
    // the command's runs need), or when more than 40% of the pack went unused: a pack grown by
    // a rare path, such as the package parser a workspace's first run needs (later runs find
    // the package in the package cache), is pruned by the next ordinary run.
    const packed = pack === undefined ? [] : Object.keys(pack.factories);
    const unused = packed.filter((name) => !modules.has(name));
    const unusedBytes = unused.reduce((n, name) => n + pack.sizes[name], 0);
    const prune = pack !== undefined && unusedBytes * 5 > pack.bytes * 2;
    if (sources.size > 0 || prune) {
      const names = [...new Set([...packed, ...modules.keys()])]
        .filter((name) => !prune || modules.has(name))
        .sort();
      const entries = names.map((name) => [name, sources.get(name) ?? pack.text(name)]);
      // The new pack is compiled, and its cache written, by the next run.
      if (writePack(dir, packName, buildId, entries, pack)) return;
    }
    for (const { script, cacheFile } of stale) {
      writeAtomic(cacheFile, () => script.createCachedData());
    }
  });
  return load("main.js");
}

/** A script compiled through the code cache in `cacheFile` (stale: write the cache at exit). */
function compile(source, filename, cacheFile) {
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
  return {
    script,
    cacheFile,
    stale: cachedData === undefined || script.cachedDataRejected === true,
  };
}

// A pack: a first line `//runx-pack <build id> <pack id> <name>:<length>,…`, then a
// parenthesised object literal mapping each chunk name to its function expression, in the
// header's order. The pack id is derived from the build id and the chunk names (which carry
// content hashes), so a code cache named by it can only belong to this exact text.

/** The pack of this command for this build, or undefined. */
function readPack(dir, packName, buildId, versionTag) {
  const filename = path.join(dir, `${packName}.js`);
  let text;
  try {
    text = fs.readFileSync(filename, "latin1");
  } catch {
    return undefined;
  }
  const header = /^\/\/runx-pack (\S+) (\S+) (\S+)\n/.exec(text);
  if (header === null || header[1] !== buildId) return undefined;
  const sizes = {};
  for (const item of header[3].split(",")) {
    const [name, length] = item.split(":");
    sizes[name] = Number(length);
  }
  const cacheFile = path.join(dir, `${packName}.${header[2]}.${versionTag}.v8cache`);
  let compiled;
  let factories;
  try {
    compiled = compile(text, filename, cacheFile);
    factories = compiled.script.runInThisContext();
  } catch {
    return undefined; // not a pack after all: run from the chunk files
  }
  // Chunk texts in header order after "({\n", each as `"name":` text ",\n" (see writePack).
  const offsets = {};
  let at = header[0].length + 3;
  for (const [name, length] of Object.entries(sizes)) {
    at += JSON.stringify(name).length + 1;
    offsets[name] = at;
    at += length + 2;
  }
  return {
    ...compiled,
    factories,
    sizes,
    bytes: text.length,
    id: header[2],
    // The chunk file's text: the pack stores it without its outer parentheses (see writePack).
    text: (name) => `(${text.slice(offsets[name], offsets[name] + sizes[name])})`,
  };
}

/** Writes a pack of `entries` ([name, text]); true when the pack file was replaced. */
function writePack(dir, packName, buildId, entries, previous) {
  const id = fnv1a(`${buildId}\n${entries.map(([name]) => name).join("\n")}`);
  if (previous !== undefined && previous.id === id) return false;
  // A chunk file is `(function …)`. In the pack the parentheses go: V8 compiles a
  // parenthesised function eagerly, and a pack's chunks should compile only when required.
  const bare = entries.map(([name, source]) => [name, source.slice(1, -1)]);
  const header = `//runx-pack ${buildId} ${id} ${bare.map(([n, s]) => `${n}:${s.length}`).join(",")}\n`;
  const body = bare.map(([name, source]) => `${JSON.stringify(name)}:${source},\n`).join("");
  if (!writeAtomic(path.join(dir, `${packName}.js`), () => `${header}({\n${body}})\n`)) {
    return false;
  }
  if (previous !== undefined) {
    try {
      fs.rmSync(previous.cacheFile, { force: true });
    } catch {
      // Left behind; a cache names its pack, so it is never applied to another one.
    }
  }
  return true;
}

/** 64-bit FNV-1a of a string's UTF-16 units, as 16 hex digits. */
function fnv1a(text) {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, "0");
}

/** Writes `make()` to `file` through a temporary file and a rename; false when it cannot. */
function writeAtomic(file, make) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const data = make();
    fs.writeFileSync(
      tmp,
      data,
      typeof data === "string" ? { encoding: "latin1", mode: 0o644 } : { mode: 0o644 },
    );
    fs.renameSync(tmp, file);
    return true;
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // dist/ is read-only: run without packs and caches.
    }
    return false;
  }
}
