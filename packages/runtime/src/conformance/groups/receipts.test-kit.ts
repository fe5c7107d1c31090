/**
 * Receipts: canonical JSON and verification, replayed through the
 * public CLI from the root of a scratch copy of the corpus:
 * - `verify-spine`, `c14n-receipt`: `runx verify --allow-local-development-signatures --receipt`
 *   over the harness-spine receipts; the recomputed body digest must be the pinned one.
 * - `verify-receipt`: `runx verify --receipt receipt.json --json` must print `expected.json`
 *   (a JSON parse-error finding's wording aside) and exit 0 when valid, 3 otherwise.
 * - `c14n-stable`: each vector's value goes through a probe skill of our own that calls the
 *   native `data.digest` (canonical_json); the output must contain `expected_sha256`.
 * - `receipt-oracle`: the sealed receipt of `fixtures/harness/echo-skill.yaml` must equal the
 *   oracle's canonical JSON byte for byte.
 * - `harness-report`: the package report of `runx harness skills/issue-intake` must equal the
 *   snapshot once receipt ids become `<receipt:N>`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { canonicalJson } from "../../receipts/canonical.js";
import { runx, type CliResult, type Workspace } from "../../testing/cli.js";
import { replayEachInScratch, UPSTREAM, type CaseRow, type Verdict } from "../corpus.test-kit.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A `runx.verify_verdict.v1` as far as these replays read it. */
interface VerifyVerdict {
  valid?: boolean;
  digest?: { actual?: string | null };
  findings?: Array<{ code?: string; path?: string; message?: string }>;
}

/** The corpus documents these replays read (upstream shapes). */
interface SpineFixture {
  expected: JsonObject & { digest: string };
}
interface ReceiptOracles {
  cases: Array<{ name: string; fixture: string; body_sha256: string }>;
}
interface VerifyCase {
  expected: string;
  receipt: string;
  signature_mode: "production" | "local-development";
}
interface VerifierKey {
  kid: string;
  public_key_base64: string;
}
interface StableJsonVectors {
  cases: Array<{ name: string; value: Json; expected_sha256: string }>;
}
interface HarnessReport {
  schema?: string;
  receipt?: Json;
  receipt_ids?: string[];
}

const PASS: Verdict = { result: "PASS" };
const fail = (reason: string): Verdict => ({ result: "FAIL", reason });

function readCorpusJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(UPSTREAM, path), "utf8")) as T;
}

function parseStdout<T>(r: CliResult): T | undefined {
  try {
    return r.json<T>();
  } catch {
    return undefined;
  }
}

function firstLine(r: CliResult): string {
  return (r.stderr.trim() || r.stdout.trim()).split("\n")[0] ?? "";
}

/** `runx verify --receipt <receipt> --json` with local-development signatures allowed. */
async function verifyLocal(ws: Workspace, receipt: Json): Promise<CliResult> {
  ws.write("probe/receipt.json", `${JSON.stringify(receipt, null, 2)}\n`);
  return runx(ws, [
    "verify",
    "--allow-local-development-signatures",
    "--receipt",
    "probe/receipt.json",
    "--json",
  ]);
}

async function replaySpine(ws: Workspace, row: CaseRow): Promise<Verdict> {
  const receipt = readCorpusJson<SpineFixture>(row.target).expected;
  const r = await verifyLocal(ws, receipt);
  const verdict = parseStdout<VerifyVerdict>(r);
  if (verdict === undefined) return fail(`no verdict (exit ${r.code}): ${firstLine(r)}`);
  if (r.code !== 0 || verdict.valid !== true) {
    return fail(`not valid (exit ${r.code}): ${JSON.stringify(verdict.findings)}`);
  }
  const actual = verdict.digest?.actual;
  if (actual !== receipt.digest) {
    return fail(`digest.actual ${JSON.stringify(actual)} != ${receipt.digest}`);
  }
  return PASS;
}

async function replayReceiptC14n(ws: Workspace, row: CaseRow): Promise<Verdict> {
  for (const oracle of readCorpusJson<ReceiptOracles>(row.target).cases) {
    const fixture = readCorpusJson<SpineFixture>(`fixtures/contracts/${oracle.fixture}`);
    const r = await verifyLocal(ws, fixture.expected);
    const verdict = parseStdout<VerifyVerdict>(r);
    if (verdict === undefined) return fail(`${oracle.name}: no verdict (exit ${r.code})`);
    const actual = verdict.digest?.actual;
    if (actual !== oracle.body_sha256) {
      return fail(
        `${oracle.name}: digest.actual ${JSON.stringify(actual)} != body_sha256 ${oracle.body_sha256}`,
      );
    }
  }
  return PASS;
}

/** The verdict with a receipt_parse_error finding's wording blanked (not part of the contract). */
function comparable(verdict: VerifyVerdict): VerifyVerdict {
  return {
    ...verdict,
    findings: (verdict.findings ?? []).map((f) =>
      f.code === "receipt_parse_error" ? { ...f, message: "" } : f,
    ),
  };
}

async function replayVerifyCase(ws: Workspace, row: CaseRow): Promise<Verdict> {
  const caseDoc = readCorpusJson<VerifyCase>(`${row.target}/case.json`);
  const expected = readCorpusJson<VerifyVerdict>(`${row.target}/${caseDoc.expected}`);
  const args = ["verify", "--receipt", `${row.target}/${caseDoc.receipt}`, "--json"];
  const env: Record<string, string> = {};
  if (caseDoc.signature_mode === "production") {
    const verifier = readCorpusJson<VerifierKey>("fixtures/receipt-verify/verifier.json");
    env.RUNX_RECEIPT_VERIFY_KID = verifier.kid;
    env.RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64 = verifier.public_key_base64;
  } else {
    args.push("--allow-local-development-signatures");
  }
  const r = await runx(ws, args, { env });
  const verdict = parseStdout<VerifyVerdict>(r);
  if (verdict === undefined) return fail(`no verdict (exit ${r.code}): ${firstLine(r)}`);
  const want = expected.valid === true ? 0 : 3;
  if (r.code !== want) return fail(`exit ${r.code}, expected ${want}`);
  // Key order is compared too: the verdict is pinned as printed.
  const got = JSON.stringify(comparable(verdict));
  const wanted = JSON.stringify(comparable(expected));
  return got === wanted ? PASS : fail(`verdict differs: ${got} != ${wanted}`);
}

const PROBE_SKILL =
  "---\nname: c14n-probe\ndescription: Digest one value's canonical JSON.\n---\nDigests `value` with the native data.digest tool.\n";
const PROBE_PROFILE = [
  "skill: c14n-probe",
  "runners:",
  "  default:",
  "    default: true",
  "    type: graph",
  "    inputs:",
  "      value:",
  "        type: json",
  "        required: true",
  "    graph:",
  "      name: c14n-probe",
  "      result_from: [digest]",
  "      steps:",
  "        - id: digest",
  "          tool: data.digest",
  "          inputs:",
  "            value: $input.value",
  "            encoding: canonical_json",
  "",
].join("\n");

async function replayStableJson(ws: Workspace, row: CaseRow): Promise<Verdict> {
  ws.write("probe/c14n-probe/SKILL.md", PROBE_SKILL);
  ws.write("probe/c14n-probe/X.yaml", PROBE_PROFILE);
  const vectors = readCorpusJson<StableJsonVectors>(row.target).cases;
  const failures: string[] = [];
  for (const vector of vectors) {
    ws.write("probe/inputs.json", JSON.stringify({ value: vector.value }));
    const r = await runx(ws, [
      "skill",
      "probe/c14n-probe",
      "--inputs",
      "probe/inputs.json",
      "--json",
      "--receipt-dir",
      "probe/receipts",
    ]);
    if (r.code !== 0 || !r.stdout.includes(vector.expected_sha256)) {
      failures.push(`${vector.name}: exit ${r.code}, ${vector.expected_sha256} not in output`);
    }
  }
  return failures.length === 0
    ? PASS
    : fail(`${failures.length} of ${vectors.length} vectors: ${failures.slice(0, 3).join("; ")}`);
}

async function replayReceiptOracle(ws: Workspace, row: CaseRow): Promise<Verdict> {
  const r = await runx(
    ws,
    ["harness", row.target, "--json", "--receipt-dir", "conformance-receipts"],
    { timeoutMs: 60_000 },
  );
  const report = parseStdout<HarnessReport>(r);
  if (report === undefined) return fail(`no JSON on stdout (exit ${r.code}): ${firstLine(r)}`);
  // Standalone mode prints the sealed receipt, on its own or beside the report.
  const receipt = report.schema === "runx.receipt.v1" ? report : report.receipt;
  if (r.code !== 0 || receipt === undefined) return fail(`exit ${r.code}, no sealed receipt`);
  const oracle = readFileSync(
    join(UPSTREAM, "fixtures/harness/oracle/echo-skill.receipt.json"),
    "utf8",
  ).trimEnd();
  const got = canonicalJson(receipt);
  return got === oracle ? PASS : fail(`sealed receipt differs from the oracle: ${got}`);
}

/** Replaces every receipt id with `<receipt:N>`, numbered by first appearance. */
function normaliseReceiptIds(report: HarnessReport): HarnessReport {
  const seen: string[] = [];
  return {
    ...report,
    receipt_ids: (report.receipt_ids ?? []).map((id) => {
      if (!seen.includes(id)) seen.push(id);
      return `<receipt:${seen.indexOf(id) + 1}>`;
    }),
  };
}

async function replayHarnessReport(ws: Workspace, row: CaseRow): Promise<Verdict> {
  const snapshot = readCorpusJson<{ report: HarnessReport }>(row.id);
  const r = await runx(
    ws,
    ["harness", row.target, "--json", "--receipt-dir", "conformance-receipts"],
    { timeoutMs: 120_000 },
  );
  const report = parseStdout<HarnessReport>(r);
  if (report === undefined) return fail(`no JSON report (exit ${r.code}): ${firstLine(r)}`);
  const got = normaliseReceiptIds(report);
  return isDeepStrictEqual(got, snapshot.report)
    ? PASS
    : fail(`report differs: ${JSON.stringify(got)}`);
}

const BY_KIND: Record<string, (ws: Workspace, row: CaseRow) => Promise<Verdict>> = {
  "verify-spine": replaySpine,
  "verify-receipt": replayVerifyCase,
  "c14n-stable": replayStableJson,
  "c14n-receipt": replayReceiptC14n,
  "receipt-oracle": replayReceiptOracle,
  "harness-report": replayHarnessReport,
};

export function replayReceipts(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  return replayEachInScratch(rows, (ws, row) => {
    const replay = BY_KIND[row.replay];
    return replay !== undefined
      ? replay(ws, row)
      : Promise.resolve({ result: "SKIP", reason: `no replayer for ${row.replay}` });
  });
}
