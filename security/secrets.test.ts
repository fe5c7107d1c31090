/**
 * Secret encodings: a `--secret-env` value that a skill prints in a derived form (hex in either
 * case, percent-encoding, base64 of a longer string holding it at any byte alignment, both
 * alphabets) must not reach the run's result, its streams, receipts, history or the raw bytes
 * of the state database and its WAL. What is and is not covered: packages/runtime/src/redaction.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "./kit.js";
import type { Workspace } from "./kit.js";

const SECRET = "tok_Zq8vW3mK9pL2xR7n/+é";

const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");
const b64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");
const hex = (text: string): string => Buffer.from(text, "utf8").toString("hex");

/** Every form the skill prints, by name (the same computation the skill does). */
function leakedForms(secret: string): Record<string, string> {
  const forms: Record<string, string> = {
    hex: hex(secret),
    HEX: hex(secret).toUpperCase(),
    percent: encodeURIComponent(secret),
    percentAll: [...Buffer.from(secret, "utf8")]
      .map((b) => `%${b.toString(16).padStart(2, "0")}`)
      .join(""),
    form: new URLSearchParams({ v: `${secret} x` }).toString(),
  };
  // Users of length 2, 3 and 4 put the secret at byte offset 0, 1 and 2 (mod 3) of `user:secret`.
  for (const user of ["ab", "abc", "abcd"]) {
    forms[`basic_${user.length}`] = `Basic ${b64(`${user}:${secret}`)}`;
    forms[`basic_url_${user.length}`] = `Basic ${b64url(`${user}:${secret}`)}`;
    forms[`inner_${user.length}`] = b64(`${user}:${secret};tail`);
  }
  return forms;
}

const LEAK_SCRIPT = `
const secret = process.env.LEAKY_TOKEN ?? "";
const b64 = (t) => Buffer.from(t, "utf8").toString("base64");
const b64url = (t) => Buffer.from(t, "utf8").toString("base64url");
const hex = (t) => Buffer.from(t, "utf8").toString("hex");
const forms = {
  hex: hex(secret),
  HEX: hex(secret).toUpperCase(),
  percent: encodeURIComponent(secret),
  percentAll: [...Buffer.from(secret, "utf8")].map((b) => "%" + b.toString(16).padStart(2, "0")).join(""),
  form: new URLSearchParams({ v: secret + " x" }).toString(),
};
for (const user of ["ab", "abc", "abcd"]) {
  forms["basic_" + user.length] = "Basic " + b64(user + ":" + secret);
  forms["basic_url_" + user.length] = "Basic " + b64url(user + ":" + secret);
  forms["inner_" + user.length] = b64(user + ":" + secret + ";tail");
}
for (const [name, form] of Object.entries(forms)) process.stderr.write(name + "=" + form + "\\n");
if (process.env.RUNX_INPUT_MODE === "fail") {
  process.stderr.write("failing with " + forms.hex + "\\n");
  process.exit(1);
}
process.stdout.write(JSON.stringify(forms));
`;

let ws: Workspace;
beforeAll(() => {
  ws = makeWorkspace("runx-sec-secrets-");
  ws.write("skills/leaky/SKILL.md", "---\nname: leaky\n---\nPrints its token, encoded.\n");
  ws.write("skills/leaky/leak.mjs", LEAK_SCRIPT);
  ws.write(
    "skills/leaky/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: node",
      "    args: [./leak.mjs]",
      "    inputs:",
      "      mode:",
      "        type: string",
      "        default: ok",
      "",
    ].join("\n"),
  );
});
afterAll(() => ws.cleanup());

/** The raw bytes of every file under .runx (state.sqlite, its -wal, receipts, journals). */
function stateBytes(): string {
  return ws
    .files(".runx")
    .map((f) => readFileSync(join(ws.root, f)).toString("latin1"))
    .join("\n");
}

describe("secret encodings", () => {
  it("redacts hex, percent and base64 forms everywhere the run is recorded", async () => {
    const env = { LEAKY_TOKEN: SECRET };
    const ok = await runx(ws, ["skill", "skills/leaky", "--secret-env", "LEAKY_TOKEN", "--json"], {
      env,
    });
    expect(ok.code, ok.stderr).toBe(0);
    const result = ok.json<{ result: Record<string, string>; run_id: string }>().result;
    const forms = leakedForms(SECRET);
    expect(Object.keys(result).sort()).toEqual(Object.keys(forms).sort());
    for (const [name, value] of Object.entries(result)) {
      expect(value, name).toContain("[redacted-credential]");
    }
    // The Basic scheme word survives: only the encoded credential is replaced.
    expect(result.basic_3).toMatch(/^Basic /);

    const failed = await runx(
      ws,
      ["skill", "skills/leaky", "--secret-env", "LEAKY_TOKEN", "--mode", "fail", "--json"],
      { env },
    );
    expect(failed.code).toBe(1);
    const runId = ok.json<{ run_id: string }>().run_id;
    const history = await runx(ws, ["history", "--json"], { env });
    const detail = await runx(ws, ["history", "--detail", runId, "--json"], { env });
    expect(detail.code).toBe(0);

    const leaked = Object.values(forms);
    // The stable part of each base64 form: what any redaction must remove at the least.
    const needles = [
      SECRET,
      hex(SECRET),
      hex(SECRET).toUpperCase(),
      encodeURIComponent(SECRET),
      ...leaked.map((form) => form.replace(/^Basic /, "").slice(6, -6)),
    ];
    const places: Record<string, string> = {
      stdout: ok.stdout,
      stderr: ok.stderr,
      failedStdout: failed.stdout,
      failedStderr: failed.stderr,
      history: history.stdout,
      detail: detail.stdout,
      state: stateBytes(),
    };
    for (const [place, text] of Object.entries(places)) {
      for (const needle of needles)
        expect(text.includes(needle), `${needle} in ${place}`).toBe(false);
    }
  });
});
