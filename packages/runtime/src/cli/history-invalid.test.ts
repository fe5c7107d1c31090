/**
 * `runx history` through the built executable never hides a receipt whose file no longer
 * verifies: an edited receipt and a truncated one are listed as invalid with the reason
 * (docs/receipts.md, "Receipts that no longer verify"), the others exactly as before.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

interface Row {
  id: string;
  name: string | null;
  status: string | null;
  created_at: string;
  summary: string | null;
  verification: { status: string; reason?: string };
}

let ws: Workspace;
let ids: string[];
let runIds: string[];
beforeEach(async () => {
  ws = makeWorkspace();
  ws.addBundledSkill("echo");
  ids = [];
  runIds = [];
  for (const message of ["one", "two", "three"]) {
    const run = await runx(ws, ["skill", "skills/echo", "--message", message, "--json"]);
    expect(run.code).toBe(0);
    ids.push(String(run.json().receipt_id));
    runIds.push(String(run.json().run_id));
  }
});
afterEach(() => ws.cleanup());

const rel = (id: string) => `.runx/receipts/sha256-${id.slice("sha256:".length)}.json`;

async function rows(args: string[] = []): Promise<Row[]> {
  const r = await runx(ws, ["history", ...args, "--json"]);
  expect(r.code).toBe(0);
  return r.json<{ receipts: Row[] }>().receipts;
}

/** Edits the sealed summary of one receipt and truncates another, on disk. */
function tamper(edited: string, truncated: string): void {
  ws.write(rel(edited), ws.read(rel(edited)).replace("step default completed", "step edited"));
  const text = ws.read(rel(truncated));
  ws.write(rel(truncated), text.slice(0, Math.floor(text.length / 2)));
}

describe("runx history with receipts that no longer verify", () => {
  it("lists an edited and a truncated receipt as invalid with the reason, the rest unchanged", async () => {
    const [edited, truncated, intact] = ids as [string, string, string];
    const before = await rows();
    tamper(edited, truncated);
    const after = await rows();

    expect(after.map((r) => r.id).sort()).toEqual([...ids].sort());
    const byId = new Map(after.map((r) => [r.id, r]));
    expect(byId.get(edited)).toMatchObject({
      name: "echo",
      status: "closed",
      summary: "step edited",
      verification: { status: "invalid" },
    });
    expect(byId.get(edited)?.verification.reason).toContain("seal_digest_mismatch");
    expect(byId.get(truncated)).toMatchObject({
      name: null,
      status: null,
      summary: null,
      created_at: before.find((r) => r.id === truncated)?.created_at,
      verification: { status: "invalid", reason: "receipt JSON is malformed" },
    });
    expect(byId.get(intact)).toEqual(before.find((r) => r.id === intact));
    expect(byId.get(intact)?.verification).toEqual({ status: "unverified" });

    // An invalid row holds its place in the order and counts toward --limit like any other.
    expect(await rows(["--limit", "2"])).toEqual(after.slice(0, 2));
  });

  it("prints the reason on the invalid lines of the text listing", async () => {
    const [edited, truncated, intact] = ids as [string, string, string];
    tamper(edited, truncated);
    const r = await runx(ws, ["history"]);
    expect(r.code).toBe(0);
    const line = (id: string) => r.stdout.split("\n").find((l) => l.includes(id.slice(0, 19)));
    expect(line(edited)).toContain("invalid: receipt digest must match");
    expect(line(truncated)).toContain("invalid: receipt JSON is malformed");
    expect(line(truncated)).toContain("(unreadable)");
    expect(line(intact)).toMatch(/unverified$/);
  });

  it("re-checks a receipt that changed after a listing found it clean", async () => {
    const [, , intact] = ids as [string, string, string];
    expect((await rows()).find((r) => r.id === intact)?.verification.status).toBe("unverified");
    expect(ws.files(".runx/cache").some((f) => f.includes("verified-listing-"))).toBe(true);
    ws.write(rel(intact), ws.read(rel(intact)).replace("step default completed", "step edited"));
    expect((await rows()).find((r) => r.id === intact)?.verification.status).toBe("invalid");
  });

  it("shows the reason and the failed checks in --detail of an edited receipt", async () => {
    const [edited, truncated] = ids as [string, string, string];
    tamper(edited, truncated);
    const json = await runx(ws, ["history", "--detail", edited, "--json"]);
    expect(json.code).toBe(0);
    const detail = json.json<{
      verification: { status: string; reason: string; findings: Array<{ code: string }> };
    }>();
    expect(detail.verification.status).toBe("invalid");
    expect(detail.verification.reason).toContain("seal_digest_mismatch");
    expect(detail.verification.findings.map((f) => f.code)).toContain("seal_digest_mismatch");
    const text = await runx(ws, ["history", "--detail", edited]);
    expect(text.stdout).toContain("verification: invalid: receipt digest must match");
    // A file that no longer decodes has no document to show: the refusal names why.
    const gone = await runx(ws, ["history", "--detail", truncated, "--json"]);
    expect(gone.code).not.toBe(0);
    expect(gone.stdout + gone.stderr).toContain("receipt JSON is malformed");
  });

  it("shows a run whose receipt no longer decodes, with that receipt invalid and why", async () => {
    const [edited, truncated] = ids as [string, string, string];
    tamper(edited, truncated);
    const runId = runIds[1] as string;
    const json = await runx(ws, ["history", "--detail", runId, "--json"]);
    expect(json.code).toBe(0);
    expect(
      json.json<{
        run: { id: string; receiptId: string };
        receipt: unknown;
        verification: unknown;
      }>(),
    ).toMatchObject({
      run: { id: runId, receiptId: truncated },
      receipt: null,
      verification: { status: "invalid", reason: "receipt JSON is malformed" },
    });
    const text = await runx(ws, ["history", "--detail", runId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`receipt ${truncated}`);
    expect(text.stdout).toContain("verification: invalid: receipt JSON is malformed");
  });
});
