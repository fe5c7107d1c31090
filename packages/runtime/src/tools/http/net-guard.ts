/**
 * Network admission for the HTTP tools. A URL is admitted when it is http(s), carries no
 * credentials, its host is allowed, and every address its host resolves to is publicly
 * routable (unless the runner declared `allow_private_network`). Admission returns the
 * checked address so the connection can be pinned to it: the transport never resolves the
 * name a second time, which closes the DNS-rebinding window between check and connect.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { RuntimeError } from "../../errors.js";

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses (injectable so tests run offline). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** What an address is, for admission: only `public` is reachable without the private-network grant. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "shared"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "invalid";

/** A URL that passed admission, with the address the connection must use. */
export interface AdmittedUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  hostname: string;
  pinned: ResolvedAddress;
}

/** Admission options. */
export interface AdmitOptions {
  allowPrivateNetwork: boolean;
  resolver?: Resolver;
  /** Host policy; receives the bracket-free host name and the `host[:port]` form. */
  hostAllowed?: (hostname: string, host: string) => boolean;
}

/** The system resolver: every address `dns.lookup` returns, in resolver order. */
export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

function parseIPv4(text: string): number | undefined {
  if (isIP(text) !== 4) return undefined;
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Parses an IPv6 literal (optionally with a zone and an embedded IPv4 tail) into 16 bytes. */
function parseIPv6(text: string): number[] | undefined {
  let bare = text.replace(/%.*$/, "");
  if (isIP(bare) !== 6) return undefined;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (tail?.[1] !== undefined) {
    const n = parseIPv4(tail[1]);
    if (n === undefined) return undefined;
    bare = `${bare.slice(0, tail.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [left = "", right] = bare.split("::");
  const groups = (part: string): number[] =>
    part === "" ? [] : part.split(":").map((group) => parseInt(group, 16));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const fill = right === undefined ? 0 : 8 - l.length - r.length;
  const words = [...l, ...new Array<number>(Math.max(fill, 0)).fill(0), ...r];
  return words.length === 8 ? words.flatMap((w) => [w >>> 8, w & 255]) : undefined;
}

const inV4 = (ip: number, base: string, bits: number): boolean => {
  const start = parseIPv4(base) ?? 0;
  const size = 2 ** (32 - bits);
  return ip >= start && ip < start + size;
};

function classifyV4(ip: number): AddressClass {
  if (inV4(ip, "0.0.0.0", 8)) return "unspecified";
  if (inV4(ip, "127.0.0.0", 8)) return "loopback";
  if (inV4(ip, "10.0.0.0", 8) || inV4(ip, "172.16.0.0", 12) || inV4(ip, "192.168.0.0", 16)) {
    return "private";
  }
  if (inV4(ip, "169.254.0.0", 16)) return "link-local";
  if (inV4(ip, "100.64.0.0", 10)) return "shared";
  if (inV4(ip, "224.0.0.0", 4)) return "multicast";
  const reserved: Array<[string, number]> = [
    ["192.0.0.0", 24], // IETF protocol assignments
    ["192.0.2.0", 24], // documentation
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["198.18.0.0", 15], // benchmarking
    ["240.0.0.0", 4], // future use and broadcast
  ];
  return reserved.some(([base, bits]) => inV4(ip, base, bits)) ? "reserved" : "public";
}

const v4At = (b: number[], at: number): number =>
  ((b[at] ?? 0) * 2 ** 24 +
    ((b[at + 1] ?? 0) << 16) +
    ((b[at + 2] ?? 0) << 8) +
    (b[at + 3] ?? 0)) >>>
  0;

function classifyV6(b: number[]): AddressClass {
  const zeroUpTo = (n: number): boolean => b.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(16)) return "unspecified";
  if (zeroUpTo(15) && b[15] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) carry an IPv4 destination.
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(v4At(b, 12));
  if (zeroUpTo(12)) return classifyV4(v4At(b, 12));
  const w0 = ((b[0] ?? 0) << 8) | (b[1] ?? 0);
  const w1 = ((b[2] ?? 0) << 8) | (b[3] ?? 0);
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the embedded IPv4 address.
  if (w0 === 0x64 && w1 === 0xff9b && b.slice(4, 12).every((x) => x === 0)) {
    return classifyV4(v4At(b, 12));
  }
  if (w0 === 0x2002) return classifyV4(v4At(b, 2));
  if ((w0 & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if ((w0 & 0xffc0) === 0xfe80) return "link-local";
  if ((w0 & 0xffc0) === 0xfec0) return "private"; // deprecated site-local
  if ((w0 & 0xff00) === 0xff00) return "multicast";
  if (w0 === 0x2001 && (w1 === 0x0db8 || w1 === 0)) return "reserved"; // documentation, Teredo
  if ((w0 & 0xe000) !== 0x2000) return "reserved"; // outside global unicast 2000::/3
  return "public";
}

/** Classifies an IP address literal (IPv4, IPv6, IPv4-mapped IPv6; brackets and zones allowed). */
export function classifyAddress(address: string): AddressClass {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return classifyV4(v4);
  const v6 = parseIPv6(text);
  return v6 === undefined ? "invalid" : classifyV6(v6);
}

/** True when the address is publicly routable. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === "public";
}

/** Matches a host name against an allowlist entry: exact, `*` (any), or `*.suffix` (subdomains). */
export function matchesHostPattern(hostname: string, pattern: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  const entry = pattern.toLowerCase().replace(/\.$/, "");
  if (entry === "*") return true;
  if (entry.startsWith("*."))
    return host.endsWith(entry.slice(1)) && host.length > entry.length - 1;
  return host === entry;
}

function denied(message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError("NETWORK_DENIED", message, details);
}

/** Parses and admits a URL; throws NETWORK_DENIED, INPUT_INVALID or HTTP_FAILED (resolution). */
export async function admitUrl(raw: string, options: AdmitOptions): Promise<AdmittedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RuntimeError("INPUT_INVALID", "is not a valid absolute URL", { reason: "url" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw denied(`scheme ${url.protocol} is not allowed; use http or https`, { reason: "scheme" });
  }
  if (url.username !== "" || url.password !== "") {
    throw denied("URLs may not carry credentials", { reason: "credentials" });
  }
  url.hash = "";
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (options.hostAllowed !== undefined && !options.hostAllowed(hostname, url.host)) {
    throw denied(`host ${hostname} is not in the allowed hosts`, {
      reason: "host_not_allowed",
      host: hostname,
    });
  }
  // `localhost` names are loopback by definition (RFC 6761), whatever a resolver answers.
  if (
    !options.allowPrivateNetwork &&
    (hostname === "localhost" || hostname.endsWith(".localhost"))
  ) {
    throw denied(`host ${hostname} is a loopback name`, {
      reason: "private_address",
      host: hostname,
      address_class: "loopback",
    });
  }
  let addresses: ResolvedAddress[];
  const literal = isIP(hostname);
  if (literal !== 0) {
    addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await (options.resolver ?? systemResolver)(hostname);
    } catch {
      throw new RuntimeError("HTTP_FAILED", `cannot resolve host ${hostname}`, {
        reason: "dns",
        host: hostname,
      });
    }
  }
  const first = addresses[0];
  if (first === undefined) {
    throw new RuntimeError("HTTP_FAILED", `host ${hostname} has no addresses`, {
      reason: "dns",
      host: hostname,
    });
  }
  if (!options.allowPrivateNetwork) {
    // Refuse when ANY address is non-public: a mixed answer is how rebinding attacks start.
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (blocked !== undefined) {
      const kind = classifyAddress(blocked.address);
      throw denied(`host ${hostname} resolves to a ${kind} address`, {
        reason: "private_address",
        host: hostname,
        address_class: kind,
      });
    }
  }
  return { url, hostname, pinned: first };
}
