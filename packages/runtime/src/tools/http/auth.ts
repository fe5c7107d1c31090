/**
 * The `auth` binding of the HTTP batch tools, as upstream defines it: `{type: bearer|oauth1,
 * secret_env}` names a secret the run delivered (the runner's resolved credential or a
 * `--secret-env` value, both already in the taint set). `bearer` sends
 * `authorization: Bearer <secret>`; `oauth1` reads the secret as JSON
 * `{consumer_key, consumer_secret, access_token, access_secret}` and signs each request
 * with OAuth 1.0a HMAC-SHA1 over its method, URL and query. Authenticated requests may only
 * go to hosts inside the resolved credential's audience, so a credential never travels to a
 * host it was not issued for. The secret is never echoed: errors name the variable only.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { ToolContext } from "../types.js";
import { invalid, isRecord, percentEncode } from "./resolve.js";

/** A parsed `auth` binding. */
export type RequestAuth = { kind: "none" } | { kind: "bearer" | "oauth1"; secretEnv: string };

interface OAuth1Credential {
  consumer_key: string;
  consumer_secret: string;
  access_token: string;
  access_secret: string;
}

function requiredString(value: unknown, path: string): string {
  const text = typeof value === "string" ? value.trim() : "";
  if (text === "") throw invalid("must be a non-empty string", path);
  return text;
}

/** Parses the tool input's `auth` (absent or null: none). */
export function requestAuth(auth: unknown): RequestAuth {
  if (auth === undefined || auth === null) return { kind: "none" };
  if (!isRecord(auth)) throw invalid("must be an object", "auth");
  const type = requiredString(auth.type, "auth.type");
  const secretEnv = requiredString(auth.secret_env, "auth.secret_env");
  if (type !== "bearer" && type !== "oauth1")
    throw invalid(`auth.type ${JSON.stringify(type)} must be bearer or oauth1`, "auth.type");
  return { kind: type, secretEnv };
}

/**
 * Checks that every allowed host is inside the delivered credential's audience; an
 * authenticated batch without a resolved audience is refused.
 */
export function admitAuthenticatedHosts(
  auth: RequestAuth,
  hosts: ReadonlySet<string>,
  ctx: ToolContext,
): void {
  if (auth.kind === "none") return;
  const bound = new Set(ctx.credentials?.audienceHosts ?? []);
  if (bound.size === 0)
    throw invalid("authenticated HTTP requires a resolved credential audience binding", "auth");
  for (const host of hosts) {
    if (!bound.has(host))
      throw invalid(
        `authenticated HTTP host ${JSON.stringify(host)} is outside the resolved credential audience`,
        "allowed_hosts",
      );
  }
}

function deliveredSecret(auth: { secretEnv: string }, ctx: ToolContext): string {
  const value = ctx.credentials?.secrets[auth.secretEnv];
  if (value === undefined || value === "")
    throw invalid(`delivered secret ${auth.secretEnv} is missing`, "auth.secret_env");
  return value;
}

function oauth1Credential(raw: string, name: string): OAuth1Credential {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid(`delivered secret ${name} is not valid OAuth1 JSON`, "auth.secret_env");
  }
  const fields = ["consumer_key", "consumer_secret", "access_token", "access_secret"] as const;
  if (!isRecord(parsed) || fields.some((f) => typeof parsed[f] !== "string"))
    throw invalid(`delivered secret ${name} is not valid OAuth1 JSON`, "auth.secret_env");
  if (fields.some((f) => parsed[f] === ""))
    throw invalid(`delivered secret ${name} has incomplete OAuth1 material`, "auth.secret_env");
  return parsed as unknown as OAuth1Credential;
}

/** Sorts by encoded name, then encoded value (byte order of the encodings). */
function byEncodedPair(a: [string, string], b: [string, string]): number {
  const [ak, av] = [percentEncode(a[0]), percentEncode(a[1])];
  const [bk, bv] = [percentEncode(b[0]), percentEncode(b[1])];
  if (ak !== bk) return ak < bk ? -1 : 1;
  return av < bv ? -1 : av > bv ? 1 : 0;
}

/** The OAuth 1.0a HMAC-SHA1 `authorization` value for one request. */
export function oauth1Header(
  method: string,
  url: string,
  credential: OAuth1Credential,
  fresh: { nonce: string; timestamp: string },
): string {
  const oauth = new Map<string, string>([
    ["oauth_consumer_key", credential.consumer_key],
    ["oauth_nonce", fresh.nonce],
    ["oauth_signature_method", "HMAC-SHA1"],
    ["oauth_timestamp", fresh.timestamp],
    ["oauth_token", credential.access_token],
    ["oauth_version", "1.0"],
  ]);
  const parsed = new URL(url);
  const params: Array<[string, string]> = [...parsed.searchParams.entries(), ...oauth.entries()];
  const parameterString = params
    .sort(byEncodedPair)
    .map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`)
    .join("&");
  parsed.search = "";
  parsed.hash = "";
  const base = `${method.toUpperCase()}&${percentEncode(parsed.href)}&${percentEncode(parameterString)}`;
  const key = `${percentEncode(credential.consumer_secret)}&${percentEncode(credential.access_secret)}`;
  oauth.set("oauth_signature", createHmac("sha1", key).update(base).digest("base64"));
  const rendered = [...oauth.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`)
    .join(", ");
  return `OAuth ${rendered}`;
}

/** The `authorization` header a request carries under `auth`, if any. */
export function authorizationFor(
  auth: RequestAuth,
  method: string,
  url: string,
  ctx: ToolContext,
): string | undefined {
  if (auth.kind === "none") return undefined;
  const secret = deliveredSecret(auth, ctx);
  if (auth.kind === "bearer") return `Bearer ${secret}`;
  const credential = oauth1Credential(secret, auth.secretEnv);
  return oauth1Header(method, url, credential, {
    nonce: randomBytes(16).toString("hex"),
    timestamp: String(Math.floor(ctx.now().getTime() / 1000)),
  });
}
