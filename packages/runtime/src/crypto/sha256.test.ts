import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  NATIVE_MAX_UNITS,
  createSha256,
  loadNativeSha256,
  nativeSha256,
  nativeSha256Path,
  sha256Hex,
  sha256Prefixed,
} from "./sha256.js";

const reference = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");

describe("sha256", () => {
  // FIPS 180-2 appendix B and the usual extra vectors.
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    ["é", createHash("sha256").update("é", "utf8").digest("hex")],
  ])("hashes %j (strings as UTF-8) one-shot and incrementally", (input, digest) => {
    expect(sha256Hex(input)).toBe(digest);
    expect(sha256Hex(Buffer.from(input, "utf8"))).toBe(digest);
    const half = Math.floor(input.length / 2);
    expect(createSha256().update(input.slice(0, half)).update(input.slice(half)).digestHex()).toBe(
      digest,
    );
  });

  it("hashes incremental input below, across and beyond the one-shot collection limit", () => {
    const block = Buffer.alloc(300 * 1024);
    for (let i = 0; i < block.length; i++) block[i] = (i * 7 + (i >> 10)) & 0xff;
    for (const parts of [1, 3, 4, 9]) {
      const hasher = createSha256();
      const whole = createHash("sha256");
      for (let i = 0; i < parts; i++) {
        // Buffers and strings (hashed as UTF-8) in turn.
        if (i % 2 === 0) {
          hasher.update(block);
          whole.update(block);
        } else {
          const text = `part ${i} é ${"x".repeat(200 * 1024)}`;
          hasher.update(text);
          whole.update(Buffer.from(text, "utf8"));
        }
      }
      expect(hasher.digestHex()).toBe(whole.digest("hex"));
    }
  });

  it("keeps what it was given, not the caller's buffer", () => {
    const buffer = Buffer.from("first");
    const hasher = createSha256().update(buffer);
    buffer.write("xxxxx");
    expect(hasher.update("second").digestHex()).toBe(sha256Hex("firstsecond"));
  });

  it("refuses use after its digest", () => {
    const small = createSha256().update("abc");
    small.digestHex();
    expect(() => small.update("more")).toThrow();
    expect(() => small.digestHex()).toThrow();
    const large = createSha256().update(Buffer.alloc(2 * 1024 * 1024));
    large.digestHex();
    expect(() => large.update("more")).toThrow();
  });
});

describe("native sha256 (native/sha256.c)", () => {
  // npm install builds the addon (binding.gyp); on this project's machines it must be in use.
  const addon = nativeSha256();

  it("is built and loaded, and short strings are hashed by it", () => {
    expect(addon).toBeDefined();
    expect(nativeSha256Path(import.meta.dirname)).toMatch(
      /build[/\\]Release[/\\]runx_sha256\.node$/,
    );
  });

  it("gives node:crypto's digest for every kind of string it takes", () => {
    const native = addon!;
    // A deterministic spread of strings: ASCII, Latin-1, BMP, astral pairs, unpaired
    // surrogates (hashed as U+FFFD by both), NUL and controls, lengths 0 to the limit.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    const pools = [
      () => 32 + (next() % 95),
      () => next() % 256,
      () => next() % 0xd800,
      () => 0xd800 + (next() % 0x800),
      () => 0xe000 + (next() % 0x2000),
    ];
    const cases: string[] = ["", "\u0000", "\ud800", "a\udc00b", "\ud83d\ude00", "é✓𝄞"];
    for (let i = 0; i < 400; i++) {
      const length = i < 200 ? i : next() % (NATIVE_MAX_UNITS + 1);
      const pool = pools[i % pools.length] as () => number;
      let text = "";
      for (let j = 0; j < length; j++) {
        text += String.fromCharCode(pool());
        if (i % 7 === 0 && j % 5 === 0) text += "\ud83d\ude00".slice(0, length - text.length);
      }
      cases.push(text.slice(0, NATIVE_MAX_UNITS));
    }
    // At the limit: every unit three UTF-8 bytes (the most the addon takes), and just beyond.
    cases.push("€".repeat(NATIVE_MAX_UNITS), "x".repeat(NATIVE_MAX_UNITS));
    for (const text of cases) {
      const digest = reference(text);
      expect(native.sha256Hex(text)).toBe(digest);
      expect(native.sha256Prefixed(text)).toBe(`sha256:${digest}`);
      expect(sha256Hex(text)).toBe(digest);
      expect(sha256Prefixed(text)).toBe(`sha256:${digest}`);
    }
  });

  it("is loaded once a process has hashed NATIVE_AFTER short strings, not for the first ones", async () => {
    vi.resetModules();
    const fresh = await import("./sha256.js");
    for (let i = 0; i < fresh.NATIVE_AFTER; i++) {
      expect(fresh.sha256Hex(`item ${i}`)).toBe(reference(`item ${i}`));
      // Long strings and bytes never count.
      fresh.sha256Hex("x".repeat(NATIVE_MAX_UNITS + 1));
    }
    expect(fresh.nativeSha256InUse()).toBe(false);
    expect(fresh.sha256Prefixed("one more")).toBe(`sha256:${reference("one more")}`);
    expect(fresh.nativeSha256InUse()).toBe(true);
  });

  it("hashes longer strings and bytes through node:crypto", () => {
    for (const text of ["€".repeat(NATIVE_MAX_UNITS + 1), "x".repeat(100_000)]) {
      expect(sha256Hex(text)).toBe(reference(text));
      expect(sha256Prefixed(text)).toBe(`sha256:${reference(text)}`);
    }
    const bytes = Buffer.from("bytes are hashed by node:crypto");
    expect(sha256Prefixed(bytes)).toBe(`sha256:${reference(bytes)}`);
  });

  it("refuses what it cannot hash whole instead of hashing part of it", () => {
    const native = addon!;
    expect(() => native.sha256Hex("€".repeat(NATIVE_MAX_UNITS + 1))).toThrow(RangeError);
    expect(() => native.sha256Hex("x".repeat(4096))).toThrow(RangeError);
    // 4096 to 4099 bytes ending in a character of each UTF-8 width: refused; 4095: hashed.
    for (const wide of ["é", "€", "😀"]) {
      const width = Buffer.byteLength(wide);
      for (let over = 1; over <= 4; over++) {
        const text = "x".repeat(4095 + over - width) + wide;
        expect(() => native.sha256Hex(text)).toThrow(RangeError);
      }
      const fits = "x".repeat(4095 - width) + wide;
      expect(native.sha256Hex(fits)).toBe(reference(fits));
    }
    expect(() => (native.sha256Hex as (value: unknown) => string)(Buffer.from("x"))).toThrow(
      TypeError,
    );
  });

  it("is not used when it is missing, does not load, or gives a wrong digest", () => {
    const dir = mkdtempSync(join(tmpdir(), "runx-sha256-"));
    try {
      const pkg = join(dir, "pkg");
      const release = join(pkg, "build", "Release");
      const from = join(pkg, "dist", "cli");
      mkdirSync(release, { recursive: true });
      mkdirSync(from, { recursive: true });
      writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "@runx/runtime" }));
      expect(loadNativeSha256(undefined)).toBeUndefined();
      expect(loadNativeSha256(from)).toBeUndefined();
      writeFileSync(join(release, "runx_sha256.node"), "not a shared object");
      expect(nativeSha256Path(from)).toBe(join(release, "runx_sha256.node"));
      expect(loadNativeSha256(from)).toBeUndefined();
      // The real one, found from a bundle's folder below the package.
      copyFileSync(nativeSha256Path(import.meta.dirname)!, join(release, "runx_sha256.node"));
      expect(loadNativeSha256(from)?.sha256Hex("abc")).toBe(reference("abc"));
      expect(loadNativeSha256(join(pkg, "dist"))?.sha256Hex("abc")).toBe(reference("abc"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is loaded only from the runtime package, never from a folder above or beside it", () => {
    const dir = mkdtempSync(join(tmpdir(), "runx-sha256-"));
    try {
      const real = nativeSha256Path(import.meta.dirname)!;
      // A working addon in a parent folder and in a package of another name: both ignored.
      for (const planted of [
        join(dir, "build", "Release"),
        join(dir, "other", "build", "Release"),
      ]) {
        mkdirSync(planted, { recursive: true });
        copyFileSync(real, join(planted, "runx_sha256.node"));
      }
      writeFileSync(join(dir, "other", "package.json"), JSON.stringify({ name: "other" }));
      const from = join(dir, "other", "dist", "cli");
      mkdirSync(from, { recursive: true });
      expect(nativeSha256Path(from)).toBeUndefined();
      expect(nativeSha256Path(join(dir, "work", "src"))).toBeUndefined();
      // Another package's bundle reaches the runtime through node_modules/@runx/runtime.
      const installed = join(dir, "app", "node_modules", "@runx", "runtime", "build", "Release");
      mkdirSync(installed, { recursive: true });
      copyFileSync(real, join(installed, "runx_sha256.node"));
      const bundle = join(dir, "app", "dist");
      mkdirSync(bundle, { recursive: true });
      expect(nativeSha256Path(bundle)).toBe(join(installed, "runx_sha256.node"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
