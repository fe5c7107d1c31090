import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { admitUrl, classifyAddress, matchesHostPattern } from "./net-guard.js";
import type { AddressClass, Resolver } from "./net-guard.js";

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(admitted)";
  } catch (error) {
    return isRuntimeError(error) ? error.code : "(not a RuntimeError)";
  }
}

const table = (entries: Record<string, string[]>): Resolver => {
  return (hostname) => {
    const addresses = entries[hostname];
    if (addresses === undefined) return Promise.reject(new Error("ENOTFOUND"));
    return Promise.resolve(
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const),
    );
  };
};

describe("classifyAddress", () => {
  const cases: Array<[string, AddressClass]> = [
    ["93.184.216.34", "public"],
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.15.255.255", "public"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["192.169.0.1", "public"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared"],
    ["100.127.255.255", "shared"],
    ["100.128.0.1", "public"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.10", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fc00::1", "private"],
    ["fd12:3456:789a::1", "private"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::a00:1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "reserved"],
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:80b::200e", "public"],
    ["not-an-ip", "invalid"],
    ["256.1.1.1", "invalid"],
  ];
  it.each(cases)("classifies %s as %s", (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe("matchesHostPattern", () => {
  it.each([
    ["example.com", "example.com", true],
    ["EXAMPLE.com", "example.COM", true],
    ["api.example.com", "example.com", false],
    ["api.example.com", "*.example.com", true],
    ["example.com", "*.example.com", false],
    ["evil-example.com", "*.example.com", false],
    ["anything.test", "*", true],
  ])("matches %s against %s: %s", (host, pattern, expected) => {
    expect(matchesHostPattern(host, pattern)).toBe(expected);
  });
});

describe("admitUrl", () => {
  const resolver = table({
    "public.example": ["93.184.216.34"],
    "internal.example": ["10.0.0.7"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],
    "v6.example": ["2606:4700:4700::1111"],
  });

  it("admits a public host and pins its resolved address", async () => {
    const admitted = await admitUrl("https://public.example/path#frag", {
      allowPrivateNetwork: false,
      resolver,
    });
    expect(admitted.pinned).toEqual({ address: "93.184.216.34", family: 4 });
    expect(admitted.hostname).toBe("public.example");
    expect(admitted.url.href).toBe("https://public.example/path");
  });

  it("refuses schemes other than http and https", async () => {
    expect(await codeOf(admitUrl("file:///etc/passwd", { allowPrivateNetwork: true }))).toBe(
      "NETWORK_DENIED",
    );
    expect(await codeOf(admitUrl("ftp://public.example/", { allowPrivateNetwork: true }))).toBe(
      "NETWORK_DENIED",
    );
  });

  it("refuses credentials in the URL", async () => {
    const url = "https://user:pass@public.example/";
    expect(await codeOf(admitUrl(url, { allowPrivateNetwork: false, resolver }))).toBe(
      "NETWORK_DENIED",
    );
  });

  it("refuses a string that is not an absolute URL as invalid input", async () => {
    expect(await codeOf(admitUrl("/relative", { allowPrivateNetwork: false }))).toBe(
      "INPUT_INVALID",
    );
  });

  it("refuses loopback, private and mapped literals unless the private network is allowed", async () => {
    for (const url of [
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://10.1.2.3/",
    ]) {
      expect(await codeOf(admitUrl(url, { allowPrivateNetwork: false }))).toBe("NETWORK_DENIED");
    }
    const allowed = await admitUrl("http://127.0.0.1:8080/", { allowPrivateNetwork: true });
    expect(allowed.pinned.address).toBe("127.0.0.1");
  });

  it("refuses localhost, which resolves to loopback", async () => {
    expect(await codeOf(admitUrl("http://localhost/", { allowPrivateNetwork: false }))).toBe(
      "NETWORK_DENIED",
    );
  });

  it("refuses a name that resolves to a private address", async () => {
    const url = "http://internal.example/";
    expect(await codeOf(admitUrl(url, { allowPrivateNetwork: false, resolver }))).toBe(
      "NETWORK_DENIED",
    );
  });

  it("refuses a name when any of its addresses is private", async () => {
    const url = "http://mixed.example/";
    expect(await codeOf(admitUrl(url, { allowPrivateNetwork: false, resolver }))).toBe(
      "NETWORK_DENIED",
    );
  });

  it("pins IPv6 answers with family 6", async () => {
    const admitted = await admitUrl("https://v6.example/", {
      allowPrivateNetwork: false,
      resolver,
    });
    expect(admitted.pinned).toEqual({ address: "2606:4700:4700::1111", family: 6 });
  });

  it("refuses hosts outside the host policy before resolving them", async () => {
    let resolved = 0;
    const counting: Resolver = (host) => {
      resolved++;
      return resolver(host);
    };
    const code = await codeOf(
      admitUrl("https://public.example/", {
        allowPrivateNetwork: false,
        resolver: counting,
        hostAllowed: (host) => host === "other.example",
      }),
    );
    expect(code).toBe("NETWORK_DENIED");
    expect(resolved).toBe(0);
  });

  it("reports a name that does not resolve as HTTP_FAILED", async () => {
    const url = "https://nowhere.example/";
    expect(await codeOf(admitUrl(url, { allowPrivateNetwork: false, resolver }))).toBe(
      "HTTP_FAILED",
    );
  });
});
