/**
 * Names of runx's own secrets. The parser refuses an X.yaml that would deliver a credential
 * under one of them, and the process environment never passes them to a runner.
 */

/** runx's own secrets: signing keys, agent and public API tokens, hosted handles and grants. */
const RUNX_SECRET_PATTERNS: readonly RegExp[] = [
  /^RUNX_RECEIPT_SIGN_/,
  /^RUNX_AGENT_API_KEY$/,
  /^RUNX_PUBLIC_API_TOKEN$/,
  /^RUNX_HOSTED_CREDENTIAL_HANDLES_JSON$/,
  /^RUNX_PROVIDER_PERMISSION_/,
];

/** True for names that hold runx's own secrets and may never reach a runner. */
export function isRunxSecretName(name: string): boolean {
  return RUNX_SECRET_PATTERNS.some((pattern) => pattern.test(name));
}
