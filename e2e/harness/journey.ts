/** What the journeys share: the stack, signing in, starting runs, waiting for statuses. */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { inject } from "vitest";
import { shooter } from "./artifacts.js";
import type { E2eStack, E2eUser } from "./context.js";
import { data, login, mutate, query, sessionHeaders } from "./trpc.js";
import type { Session } from "./trpc.js";
import "./context.js";

/** The running stack set up by the global harness. */
export function stack(): E2eStack {
  const ready = inject("e2e");
  if (ready === null) {
    throw new Error(`the e2e harness could not start: ${inject("e2eError") ?? "unknown error"}`);
  }
  return ready;
}

/** One journey: its screenshots, and a screenshot of every open page when it fails. */
export interface Journey {
  shot(page: Page, step: string): Promise<void>;
  /** A new browser context (own cookies) signed in as `user` through the login page. */
  signIn(user: E2eUser): Promise<Page>;
  /** A new, signed-out browser context's page. */
  anonymous(): Promise<Page>;
}

export async function journey(
  browser: Browser,
  name: string,
  body: (j: Journey) => Promise<void>,
): Promise<void> {
  const shot = shooter(name);
  const contexts: BrowserContext[] = [];
  const open = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    return context.newPage();
  };
  const j: Journey = {
    shot,
    anonymous: open,
    async signIn(user) {
      const page = await open();
      await signInOn(page, user);
      return page;
    },
  };
  try {
    await body(j);
  } catch (error) {
    for (const context of contexts) {
      for (const page of context.pages()) await shot(page, "failure").catch(() => {});
    }
    throw error;
  } finally {
    for (const context of contexts) await context.close().catch(() => {});
  }
}

/** Signs in through /login. */
export async function signInOn(page: Page, user: E2eUser): Promise<void> {
  await page.goto(`${stack().consoleUrl}/login`);
  await page.getByLabel("Username").fill(user.username);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await whoami(page, user);
}

/** Waits for "Signed in as <user> (<role>)". */
export async function whoami(page: Page, user: E2eUser): Promise<void> {
  await page
    .getByTestId("whoami")
    .filter({ hasText: `Signed in as ${user.username} (${user.role})` })
    .waitFor({ timeout: 20_000 });
}

const RUN_URL = /\/runs\/([^/?#]+)$/;

/** Starts `skill` from /skills/<skill> with the given inputs; returns the run id it navigates to. */
export async function startFromSkillPage(
  page: Page,
  skill: string,
  inputs: Record<string, string>,
): Promise<string> {
  await page.goto(`${stack().consoleUrl}/skills/${skill}`);
  const form = page.getByRole("form", { name: "Start run" });
  await form.waitFor();
  for (const [name, value] of Object.entries(inputs)) {
    await form.getByLabel(name, { exact: true }).fill(value);
  }
  await form.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL((url) => RUN_URL.test(url.pathname), { timeout: 30_000 });
  return RUN_URL.exec(new URL(page.url()).pathname)![1]!;
}

/** Waits until the run page's live status text is exactly `status` (no reload). */
export async function waitForRunStatus(page: Page, status: string, timeout = 30_000) {
  await page
    .getByTestId("run-status")
    .filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) })
    .waitFor({ timeout });
}

/** An API session for `user` (cookie + CSRF token, console Origin). */
export async function apiSession(user: E2eUser): Promise<Session> {
  return login(stack().apiUrl, stack().consoleUrl, user);
}

/** Calls a query as `session` directly on the API. */
export async function apiQuery<T>(session: Session, path: string, input?: unknown): Promise<T> {
  return data<T>(await query(stack().apiUrl, path, input, { cookie: session.cookie }));
}

/** Calls a mutation as `session` directly on the API. */
export async function apiMutate<T>(session: Session, path: string, input: unknown): Promise<T> {
  return data<T>(
    await mutate(stack().apiUrl, path, input, sessionHeaders(session, stack().consoleUrl)),
  );
}

/** Polls `fn` until it returns a value other than undefined. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeout = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The pending approval of `runId`, as the API lists it. */
export interface Pending {
  runId: string;
  gateId: string;
  reason: string;
  boundPackageDigest: string;
  boundExecutionClosureDigest: string;
  stale: boolean;
}

export async function pendingFor(session: Session, runId: string): Promise<Pending> {
  return eventually(`the pending approval of ${runId}`, async () => {
    const pending = await apiQuery<Pending[]>(session, "approvals.pending");
    return pending.find((p) => p.runId === runId);
  });
}
