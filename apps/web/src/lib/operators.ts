/**
 * The operators page's model: what each role may do (said in the add form and the role
 * picker), the password rule of the operator contract, and generated initial passwords.
 */

/** The three roles, least first, each with what it allows. */
export const ROLES = [
  {
    role: "viewer",
    label: "Viewer",
    allows: "Reads runs, approvals, receipts and skills; cannot start, answer or decide anything.",
  },
  {
    role: "approver",
    label: "Approver",
    allows:
      "Also starts runs, answers agent requests and approves or denies gates (never a run they started).",
  },
  {
    role: "admin",
    label: "Admin",
    allows: "Also adds operators, changes their roles, disables them and sets approval policies.",
  },
] as const;

export type Role = (typeof ROLES)[number]["role"];

/** The operator contract's password bounds (schemas/console/operator-add.schema.json). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;

/** Letters and digits without the look-alikes (0/O, 1/l/I), for passwords read off a screen. */
const ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/**
 * A random initial password (`length` characters, ~5.8 bits each: 20 give ~117 bits), drawn
 * without modulo bias from `random` (the browser's crypto.getRandomValues).
 */
export function generatePassword(
  length = 20,
  random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b),
): string {
  const limit = 256 - (256 % ALPHABET.length);
  let out = "";
  while (out.length < length) {
    for (const byte of random(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

/** The password's problem in the contract's words, or null when it may be used. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `password must be at least ${PASSWORD_MIN} characters`;
  if (new TextEncoder().encode(password).length > PASSWORD_MAX) {
    return `password must be at most ${PASSWORD_MAX} characters`;
  }
  return null;
}
