/** A raw HTTP tRPC client for the API-level checks (status codes, cookies, CSRF). */

/** A session as a Cookie header plus the CSRF token to echo. */
export interface Session {
  cookie: string;
  csrf: string;
}

/** What one call answered. */
export interface Answer {
  status: number;
  body: unknown;
  setCookie: string[];
}

/** The data of a successful call (throws with the answer otherwise). */
export function data<T>(answer: Answer): T {
  const body = answer.body as { result?: { data?: T } };
  if (answer.status !== 200 || body.result === undefined) {
    throw new Error(`tRPC call failed: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return body.result.data as T;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, setCookie: res.headers.getSetCookie() };
}

/** GET `<base>/trpc/<path>?input=…`. */
export async function query(
  base: string,
  path: string,
  input?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return answer(await fetch(`${base}/trpc/${path}${qs}`, { headers, redirect: "manual" }));
}

/** POST `<base>/trpc/<path>` with a JSON body. */
export async function mutate(
  base: string,
  path: string,
  input: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return answer(
    await fetch(`${base}/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(input ?? {}),
      redirect: "manual",
    }),
  );
}

/** Headers of a cookie session (Origin, Cookie, x-csrf-token). */
export function sessionHeaders(session: Session, origin: string): Record<string, string> {
  return { origin, cookie: session.cookie, "x-csrf-token": session.csrf };
}

/** Turns a login/bootstrap answer into a session. */
export function sessionOf(res: Answer): Session {
  const { csrfToken } = data<{ csrfToken: string }>(res);
  return { cookie: res.setCookie.map((c) => c.split(";")[0]).join("; "), csrf: csrfToken };
}

/** auth.login against `base` with the console's Origin. */
export async function login(
  base: string,
  origin: string,
  user: { username: string; password: string },
): Promise<Session> {
  return sessionOf(
    await mutate(
      base,
      "auth.login",
      { username: user.username, password: user.password },
      { origin },
    ),
  );
}
