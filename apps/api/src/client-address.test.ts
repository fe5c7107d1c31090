import { describe, expect, it } from "vitest";
import { canonicalAddress, clientAddress, trustedProxies } from "./client-address.js";

const loopback = trustedProxies(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

describe("clientAddress", () => {
  it("is the socket peer without X-Forwarded-For", () => {
    expect(clientAddress("127.0.0.1", undefined, loopback)).toBe("127.0.0.1");
    expect(clientAddress("198.51.100.7", undefined, loopback)).toBe("198.51.100.7");
    expect(clientAddress(undefined, "203.0.113.5", loopback)).toBe("unknown");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    expect(clientAddress("198.51.100.7", "203.0.113.5", loopback)).toBe("198.51.100.7");
    expect(clientAddress("127.0.0.1", "203.0.113.5", trustedProxies(["192.0.2.1"]))).toBe(
      "127.0.0.1",
    );
    expect(clientAddress("127.0.0.1", "203.0.113.5", trustedProxies([]))).toBe("127.0.0.1");
  });

  it("takes the address a trusted proxy appended", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.5", loopback)).toBe("203.0.113.5");
    expect(clientAddress("::1", "2001:db8::5", loopback)).toBe("2001:db8::5");
    expect(clientAddress("::ffff:127.0.0.1", "203.0.113.5", loopback)).toBe("203.0.113.5");
  });

  it("never believes what the client put on the left", () => {
    // Nor is it read: garbage there cannot put a client into the proxy's own bucket.
    for (const spoofed of ["1.2.3.4", "1.2.3.4, 5.6.7.8", "127.0.0.1", "::1, 127.0.0.1", "x"]) {
      expect(clientAddress("127.0.0.1", `${spoofed}, 203.0.113.5`, loopback)).toBe("203.0.113.5");
    }
  });

  it("walks past every trusted hop, and stops at the first untrusted one", () => {
    const chain = trustedProxies(["127.0.0.1", "10.0.0.2", "10.0.0.3"]);
    expect(clientAddress("127.0.0.1", "1.2.3.4, 203.0.113.5, 10.0.0.3, 10.0.0.2", chain)).toBe(
      "203.0.113.5",
    );
    // An untrusted hop in the middle: what it says about earlier hops is not believed.
    expect(clientAddress("127.0.0.1", "203.0.113.5, 198.51.100.9, 10.0.0.2", chain)).toBe(
      "198.51.100.9",
    );
    // Every entry a trusted proxy: the furthest one is the client.
    expect(clientAddress("127.0.0.1", "10.0.0.3, 10.0.0.2", chain)).toBe("10.0.0.3");
  });

  it("falls back to the socket peer on a malformed entry", () => {
    for (const bad of [
      "",
      " ",
      "203.0.113.5:4431",
      "[2001:db8::5]",
      "unknown",
      "evil.example",
      "203.0.113.5,",
      "203.0.113.05",
      "fe80::1%eth0",
      "203.0.113.5, not-an-ip",
    ]) {
      expect(clientAddress("127.0.0.1", bad, loopback), bad).toBe("127.0.0.1");
    }
  });

  it("reads repeated header lines as one list", () => {
    expect(clientAddress("127.0.0.1", ["1.2.3.4", "203.0.113.5"], loopback)).toBe("203.0.113.5");
  });

  it("spells one address one way, so its forms share a throttling key", () => {
    for (const form of ["203.0.113.5", "::ffff:203.0.113.5", "::FFFF:cb00:7105"]) {
      expect(clientAddress("127.0.0.1", form, loopback)).toBe("203.0.113.5");
    }
    expect(clientAddress("::ffff:198.51.100.7", undefined, loopback)).toBe("198.51.100.7");
    expect(canonicalAddress("2001:0DB8:0:0:0:0:0:5")).toBe("2001:db8::5");
    expect(canonicalAddress("::1")).toBe("::1");
  });
});

describe("trustedProxies", () => {
  it("matches an IPv4 address in its IPv4-mapped IPv6 form, and nothing that is not an address", () => {
    const trusted = trustedProxies(["127.0.0.1"]);
    expect(trusted("127.0.0.1")).toBe(true);
    expect(trusted("::ffff:127.0.0.1")).toBe(true);
    expect(trusted("127.0.0.2")).toBe(false);
    expect(trusted("::1")).toBe(false);
    expect(trusted("localhost")).toBe(false);
  });
});
