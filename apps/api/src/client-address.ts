/**
 * Which address a request comes from, for per-address throttling (./throttle.ts). The TCP
 * peer, unless the peer is a trusted proxy (RUNX_API_TRUSTED_PROXIES, ./env.ts: by default
 * loopback, where `npm start` runs the console whose /trpc rewrite forwards every browser's
 * call): then `X-Forwarded-For` is read from the right, past the trusted hops, and the first
 * address a trusted hop appended is the client. The left of the list is whatever the client
 * sent and is never believed; a list that does not parse is not believed at all.
 */
import { BlockList, isIP } from "node:net";

/** Tells whether an address (IPv4, IPv6 or IPv4-mapped IPv6) is one of the trusted proxies. */
export type TrustedProxies = (address: string) => boolean;

/** The matcher of `addresses` (IP addresses, already validated by ./env.ts). */
export function trustedProxies(addresses: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const address of addresses) {
    list.addAddress(address, isIP(address) === 6 ? "ipv6" : "ipv4");
  }
  return (address) => {
    const family = isIP(address);
    // BlockList also matches an IPv4 rule against its IPv4-mapped IPv6 form.
    return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
  };
}

/**
 * One spelling per address, so that `::ffff:203.0.113.5`, `::FFFF:cb00:7105` and
 * `203.0.113.5` are one throttling key. Null for anything that is not a bare IP address (a
 * port, brackets, a zone id, a host name, an empty entry).
 */
export function canonicalAddress(text: string): string | null {
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6 || text.includes("%")) return null;
  const host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped === null) return host;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/**
 * The client's address: `peer` (the socket's remote address) unless it is trusted and
 * `forwardedFor` (the X-Forwarded-For header) is present; then the rightmost entry that is
 * not a trusted proxy, or the leftmost when every entry is one. A malformed entry met on the
 * way gives `peer`.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  isTrusted: TrustedProxies,
): string {
  if (peer === undefined) return "unknown";
  const socket = canonicalAddress(peer) ?? peer;
  if (forwardedFor === undefined || !isTrusted(peer)) return socket;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  let client = socket;
  for (let i = entries.length - 1; i >= 0; i--) {
    const address = canonicalAddress(entries[i]!.trim());
    if (address === null) return socket;
    client = address;
    if (!isTrusted(address)) break;
  }
  return client;
}
