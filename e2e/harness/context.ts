/** What the global harness hands to the journeys (vitest provide/inject). */

/** One operator account of the run. */
export interface E2eUser {
  username: string;
  password: string;
  role: "viewer" | "approver" | "admin";
}

/** The running stack. */
export interface E2eStack {
  /** The console's origin, e.g. http://127.0.0.1:41234 (the browser talks only to it). */
  consoleUrl: string;
  /** The API's base URL (without /trpc). */
  apiUrl: string;
  /** The scratch workspace (skills/echo, skills/gated, skills/xss, skills/dispatch). */
  workspace: string;
  admin: E2eUser;
  approver: E2eUser;
  viewer: E2eUser;
  /** The key the API signs receipts with, as `runx verify` trusts it (public part only). */
  receiptKey: { kid: string; publicKeyBase64: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    e2e: E2eStack | null;
    /** Why the harness could not start the stack (every journey then fails with it). */
    e2eError: string | null;
  }
}
