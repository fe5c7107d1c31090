/**
 * Sessions: jose-signed (HS256) JWTs in an httpOnly, SameSite=Strict cookie. Each session
 * carries a random CSRF token (claim `csrf`), which is also set in a readable cookie; a
 * cookie-authenticated mutation must echo it in the `x-csrf-token` header (double submit,
 * bound to the signed session). The JWT's `jti` names the session's row in the state store
 * (console.operators.openSession), which every request checks, so a session ends on the
 * server when it is revoked, not only when the cookie expires.
 */
import { randomBytes } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";

/** Cookie names. */
export const SESSION_COOKIE = "runx_session";
export const CSRF_COOKIE = "runx_csrf";
export const CSRF_HEADER = "x-csrf-token";

/** Session lifetime. */
export const SESSION_TTL_SECONDS = 8 * 60 * 60;

/** What a verified session says. */
export interface SessionClaims {
  operatorId: string;
  /** The session's row id (`jti`). */
  sessionId: string;
  csrf: string;
}

/** Signs and verifies sessions with one HMAC key. */
export interface SessionKeys {
  issue(operatorId: string, sessionId: string): Promise<{ jwt: string; csrf: string }>;
  verify(jwt: string): Promise<SessionClaims | null>;
}

/** Session keys over `secret` (32+ random bytes; a fresh one per process when not configured). */
export function sessionKeys(secret: Uint8Array): SessionKeys {
  const issuer = "runx-api";
  return {
    async issue(operatorId, sessionId) {
      const csrf = randomBytes(24).toString("base64url");
      const jwt = await new SignJWT({ csrf })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(operatorId)
        .setJti(sessionId)
        .setIssuer(issuer)
        .setIssuedAt()
        .setExpirationTime(`${SESSION_TTL_SECONDS}s`)
        .sign(secret);
      return { jwt, csrf };
    },
    async verify(jwt) {
      try {
        const { payload } = await jwtVerify(jwt, secret, { issuer, algorithms: ["HS256"] });
        if (
          typeof payload.sub !== "string" ||
          typeof payload.jti !== "string" ||
          typeof payload.csrf !== "string"
        ) {
          return null;
        }
        return { operatorId: payload.sub, sessionId: payload.jti, csrf: payload.csrf };
      } catch {
        return null;
      }
    },
  };
}

/** Parses a Cookie header. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // a malformed cookie is ignored
    }
  }
  return out;
}

/** `Set-Cookie` values for a new session (or, with null, for signing out). */
export function sessionCookies(
  session: { jwt: string; csrf: string } | null,
  secure: boolean,
): string[] {
  const flags = `Path=/; SameSite=Strict${secure ? "; Secure" : ""}`;
  if (session === null) {
    return [
      `${SESSION_COOKIE}=; ${flags}; HttpOnly; Max-Age=0`,
      `${CSRF_COOKIE}=; ${flags}; Max-Age=0`,
    ];
  }
  return [
    `${SESSION_COOKIE}=${session.jwt}; ${flags}; HttpOnly; Max-Age=${SESSION_TTL_SECONDS}`,
    `${CSRF_COOKIE}=${session.csrf}; ${flags}; Max-Age=${SESSION_TTL_SECONDS}`,
  ];
}
