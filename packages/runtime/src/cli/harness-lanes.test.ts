import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HarnessReport } from "../harness/index.js";
import { makeWorkspace, REPO_ROOT, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const UPSTREAM = join(REPO_ROOT, "..", "shared", "conformance", "runx-upstream");

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-harness-lanes-");
});
afterEach(() => ws.cleanup());

const PACKAGE = `skill: weather
runners:
  read:
    default: true
    type: graph
    inputs:
      city: {type: string, required: true, description: City.}
    graph:
      name: weather-read
      result_from: [fetch]
      steps:
        - id: fetch
          tool: http.read
          scopes: [net:http]
          inputs:
            requests:
              - id: now
                url: https://weather.fixture.invalid/v1/now
                query: {units: si, city: $input.city}
            allowed_hosts: [weather.fixture.invalid]
  notify:
    type: graph
    graph:
      name: weather-notify
      result_from: [post]
      steps:
        - id: approve
          run: {type: approval}
          inputs: {gate_id: weather.notify, reason: Posts to the hook.}
        - id: post
          tool: http.execute
          scopes: [net:http]
          mutation: true
          inputs:
            requests:
              - id: notify
                method: POST
                url: https://hooks.fixture.invalid/notify
                body: {event: forecast}
            allowed_hosts: [hooks.fixture.invalid]
    policy:
      guards:
        - {step: post, field: approve.approval_decision.data.approved, equals: true}
  notify-unguarded:
    type: graph
    graph:
      name: weather-notify-unguarded
      result_from: [post]
      steps:
        - id: post
          tool: http.execute
          scopes: [net:http]
          mutation: true
          inputs:
            requests:
              - {id: notify, method: POST, url: https://hooks.fixture.invalid/notify, body: {event: forecast}}
            allowed_hosts: [hooks.fixture.invalid]
  search:
    type: graph
    graph:
      name: chat-search
      result_from: [search]
      steps:
        - id: search
          tool: provider.read
          scopes: [messages.search]
          inputs:
            operation: messages.search
            target: chat://messages
            expected_provider: chat
            result_fields: [messages]
            input: {keywords: release}
`;

function weatherPackage(fixtures: Record<string, string>): void {
  ws.write("pkgs/weather/SKILL.md", "---\nname: weather\ndescription: Weather lanes.\n---\n");
  ws.write("pkgs/weather/X.yaml", PACKAGE);
  for (const [name, body] of Object.entries(fixtures)) {
    ws.write(
      `pkgs/weather/fixtures/${name}.yaml`,
      `name: ${name}\nkind: graph\ntarget: ..\n${body}`,
    );
  }
}

const NOW_URL = "https://weather.fixture.invalid/v1/now?city=Oslo&units=si";

/** The report, with each case's assertion errors grouped by fixture name. */
async function harness(target: string): Promise<{ report: HarnessReport; code: number | null }> {
  const r = await runx(ws, ["harness", target, "--json", "--receipt-dir", "out"]);
  return { report: r.json<HarnessReport>(), code: r.code };
}

const errorsOf = (report: HarnessReport, name: string): string[] =>
  report.assertion_errors.filter((e) => e.startsWith(`pkgs/weather/fixtures/${name}.yaml:`));

function storedSummaries(): string[] {
  const dir = join(ws.root, "out");
  return readdirSync(dir)
    .filter((f) => f.startsWith("sha256-"))
    .map(
      (f) =>
        (JSON.parse(readFileSync(join(dir, f), "utf8")) as { seal: { summary: string } }).seal
          .summary,
    );
}

describe("harness HTTP and provider lanes", () => {
  it("replays reads, exact exchanges and provider responses offline, and fails unmatched ones", async () => {
    weatherPackage({
      "read-sealed": `inputs: {city: Oslo}
caller:
  http_responses:
    "${NOW_URL}": {status: 200, headers: {content-type: application/json}, body: '{"temp":3}'}
expect:
  status: sealed
  step_outputs:
    fetch: {subset: {http_execution: {data: {decision: completed, responses: [{id: now, status: 200, json: {temp: 3}}]}}}}
`,
      "read-unmatched": `inputs: {city: Bergen}
caller:
  http_responses:
    "${NOW_URL}": {status: 200, body: '{"temp":3}'}
expect:
  status: failure
`,
      "read-reported": `inputs: {city: Bergen}
expect:
  status: sealed
`,
      "notify-matched": `runner: notify
caller:
  approvals: {weather.notify: true}
  http_exchanges:
    - request: {method: POST, url: "https://hooks.fixture.invalid/notify", body: {json: {event: forecast}}}
      response: {status: 202, body: {queued: true}}
expect:
  status: sealed
  step_outputs:
    post: {subset: {http_execution: {data: {decision: completed, responses: [{ok: true, status: 202, json: {queued: true}}]}}}}
`,
      "notify-unmatched": `runner: notify
caller:
  approvals: {weather.notify: true}
  http_exchanges:
    - request: {method: POST, url: "https://hooks.fixture.invalid/notify", body: {json: {event: other}}}
      response: {status: 202, body: {queued: true}}
expect:
  status: failure
`,
      "search-answered": `runner: search
caller:
  provider_responses:
    principal_id: operator
    grants: [{grant_id: g1, provider: chat, scopes: [messages.search]}]
    operations:
      - {grant_id: g1, operation: messages.search, target: "chat://messages", access: read, result: {messages: [{text: green}], secret_ref: x}}
expect:
  status: sealed
  step_outputs:
    search: {exact: null}
`,
    });
    // The provider expectation above is deliberately wrong so the observed output is shown.
    const { report, code } = await harness("pkgs/weather");
    expect(code).toBe(1);
    expect(report.case_count).toBe(6);
    // The failing step's reason reaches the report, naming the request.
    expect(errorsOf(report, "read-reported")).toEqual([
      `pkgs/weather/fixtures/read-reported.yaml: expect.status: expected "sealed", got "failure" (step 'fetch' failed: FIXTURE_UNMATCHED: no fixture response for GET https://weather.fixture.invalid/v1/now?city=Bergen&units=si (caller.http_exchanges or caller.http_responses); the harness never falls back to the network)`,
    ]);
    expect(errorsOf(report, "read-sealed")).toEqual([]);
    expect(errorsOf(report, "read-unmatched")).toEqual([]);
    expect(errorsOf(report, "notify-matched")).toEqual([]);
    // An unmatched mutation fails the case even though the fixture expected the failure.
    expect(errorsOf(report, "notify-unmatched")).toEqual([
      "pkgs/weather/fixtures/notify-unmatched.yaml: caller.http_exchanges: no exchange matches the mutation POST https://hooks.fixture.invalid/notify (it failed without reaching the network)",
    ]);
    const [search] = errorsOf(report, "search-answered");
    expect(search).toContain('"status":"success"');
    expect(search).toContain('"provider":"chat"');
    expect(search).toContain('"result":{"messages":[{"text":"green"}]}');

    const summaries = storedSummaries();
    expect(summaries).toContainEqual(
      expect.stringContaining(
        "FIXTURE_UNMATCHED: no fixture response for GET https://weather.fixture.invalid/v1/now?city=Bergen&units=si",
      ),
    );
    expect(summaries).toContainEqual(
      expect.stringContaining(
        "FIXTURE_UNMATCHED: no fixture response for POST https://hooks.fixture.invalid/notify",
      ),
    );
  });

  it("refuses http.execute without an approved run: approval guard, before any request", async () => {
    const exchanges = `  http_exchanges:
    - request: {method: POST, url: "https://hooks.fixture.invalid/notify", body: {json: {event: forecast}}}
      response: {status: 202, body: {queued: true}}
`;
    weatherPackage({
      unguarded: `runner: notify-unguarded\ncaller:\n${exchanges}expect:\n  status: sealed\n`,
      denied: `runner: notify\ncaller:\n  approvals: {weather.notify: false}\n${exchanges}expect:\n  status: sealed\n`,
    });
    const { report } = await harness("pkgs/weather");
    const [unguarded] = errorsOf(report, "unguarded");
    expect(unguarded).toContain(
      "policy capability 'http.execute' requires an exact approved run:approval guard",
    );
    const [denied] = errorsOf(report, "denied");
    expect(denied).toContain("approval for step 'approve' was denied");
    // Neither case sent the mutation: nothing reached the exchange lane's log.
    expect(storedSummaries().join("\n")).not.toContain("POST https://hooks.fixture.invalid");
  });

  it("lets a nested graph's http.execute inherit its enclosing step's approval", async () => {
    ws.write("pkgs/weather/graph/hook/SKILL.md", "---\nname: hook\ndescription: Hook.\n---\n");
    ws.write(
      "pkgs/weather/graph/hook/X.yaml",
      `skill: hook
runners:
  act:
    default: true
    type: graph
    graph:
      name: hook-act
      result_from: [post]
      steps:
        - id: post
          tool: http.execute
          scopes: [net:http]
          mutation: true
          inputs:
            requests:
              - {id: notify, method: POST, url: https://hooks.fixture.invalid/notify, body: {event: forecast}}
            allowed_hosts: [hooks.fixture.invalid]
`,
    );
    const nested = PACKAGE.replace(
      "  notify-unguarded:",
      `  notify-nested:
    type: graph
    graph:
      name: weather-notify-nested
      result_from: [apply]
      steps:
        - id: approve
          run: {type: approval}
          inputs: {gate_id: weather.notify, reason: Posts to the hook.}
        - id: apply
          skill: graph/hook
          scopes: [net:http]
          mutation: true
    policy:
      guards:
        - {step: apply, field: approve.approval_decision.data.approved, equals: true}
  notify-unguarded:`,
    );
    weatherPackage({
      nested: `runner: notify-nested
caller:
  approvals: {weather.notify: true}
  http_exchanges:
    - request: {method: POST, url: "https://hooks.fixture.invalid/notify", body: {json: {event: forecast}}}
      response: {status: 202, body: {queued: true}}
expect:
  status: sealed
`,
    });
    ws.write("pkgs/weather/X.yaml", nested);
    // One fixture answers with its graph receipt: closed means the nested POST was sent.
    const r = await runx(ws, [
      "harness",
      "pkgs/weather/fixtures/nested.yaml",
      "--json",
      "--receipt-dir",
      "out",
    ]);
    expect(r.code).toBe(0);
    expect(r.json<{ seal: { disposition: string; summary: string } }>().seal).toMatchObject({
      disposition: "closed",
      summary: "graph weather-notify-nested completed",
    });
  });

  it("names the field of a malformed lane", async () => {
    weatherPackage({
      bad: `inputs: {city: Oslo}
caller:
  http_exchanges:
    - request: {method: POST, url: "https://user:pw@hooks.fixture.invalid/notify"}
      response: {status: 200}
`,
    });
    const { report } = await harness("pkgs/weather/fixtures/bad.yaml");
    expect(report.assertion_errors).toEqual([
      "pkgs/weather/fixtures/bad.yaml: HARNESS_INVALID: caller.http_exchanges[0].request.url: a fixture URL may not carry credentials",
    ]);
  });
});

describe("harness setup.receipts", () => {
  /** The echo package with one fixture seeding `seeds` (package-relative paths). */
  function seededEcho(seeds: string[], env = ""): void {
    ws.addBundledSkill("echo");
    ws.write(
      "skills/echo/fixtures/seeded.yaml",
      `name: seeded
kind: skill
target: ..
setup:
  receipts: [${seeds.join(", ")}]
${env}inputs: {message: hi}
expect: {status: sealed, output: {exact: {message: hi}}}
`,
    );
  }

  async function liveReceipt(): Promise<string> {
    ws.addBundledSkill("echo");
    const live = await runx(ws, [
      "skill",
      "skills/echo",
      "--message",
      "seed",
      "--json",
      "--receipt-dir",
      "live",
    ]);
    expect(live.code).toBe(0);
    return String(live.json().receipt_id);
  }

  it("seeds verified receipts into the case store, and keeps them out of the durable store", async () => {
    const id = await liveReceipt();
    const file = `sha256-${id.slice(7)}.json`;
    mkdirSync(join(ws.root, "skills/echo/fixtures/receipt-store"), { recursive: true });
    copyFileSync(
      join(ws.root, "live", file),
      join(ws.root, "skills/echo/fixtures/receipt-store", file),
    );
    seededEcho([`fixtures/receipt-store/${file}`]);
    const r = await runx(ws, [
      "harness",
      "skills/echo/fixtures/seeded.yaml",
      "--json",
      "--receipt-dir",
      "out",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(existsSync(join(ws.root, "out", file))).toBe(false);
    // The passing standalone fixture prints its own sealed receipt, not the seed.
    expect(r.json<{ schema: string; id: string }>()).toMatchObject({ schema: "runx.receipt.v1" });
    expect(r.json<{ id: string }>().id).not.toBe(id);
  });

  it("fails the case when a seed does not verify, naming the seed", async () => {
    const id = await liveReceipt();
    const file = `sha256-${id.slice(7)}.json`;
    // Change a signed field (the seal summary), keeping the id, digest and signature.
    const receipt = JSON.parse(readFileSync(join(ws.root, "live", file), "utf8")) as {
      seal: { summary: string };
    };
    receipt.seal.summary = `${receipt.seal.summary} (edited)`;
    ws.write(`skills/echo/fixtures/receipt-store/${file}`, JSON.stringify(receipt));
    seededEcho([`fixtures/receipt-store/${file}`]);
    const r = await runx(ws, ["harness", "skills/echo/fixtures/seeded.yaml", "--json"]);
    expect(r.code).toBe(1);
    const [error] = r.json<HarnessReport>().assertion_errors;
    expect(error).toMatch(
      new RegExp(
        `^skills/echo/fixtures/seeded.yaml: setup.receipts\\[0\\] \\(fixtures/receipt-store/${file}\\): `,
      ),
    );
    expect(r.json<HarnessReport>().case_count).toBe(1);
  });

  it("refuses a seed path that is not a normalized package-relative .json path", async () => {
    seededEcho(["../escape.json"]);
    const r = await runx(ws, ["harness", "skills/echo/fixtures/seeded.yaml", "--json"]);
    expect(r.json<HarnessReport>().assertion_errors).toEqual([
      'skills/echo/fixtures/seeded.yaml: HARNESS_INVALID: setup.receipts[0]: "../escape.json" is not a normalized package-relative path',
    ]);
  });

  it("verifies hosted-signed seeds under the fixture's verifier keys, and only then", async () => {
    const store = join(UPSTREAM, "skills", "refund", "fixtures", "receipt-store");
    const names = readdirSync(store).filter((n) => n.endsWith(".json"));
    expect(names.length).toBeGreaterThan(0);
    ws.addBundledSkill("echo");
    for (const name of names) {
      ws.write(
        `skills/echo/fixtures/receipt-store/${name}`,
        readFileSync(join(store, name), "utf8"),
      );
    }
    const seeds = names.map((n) => `fixtures/receipt-store/${n}`);
    // Read the key the upstream refund fixture pins, rather than restating it here.
    const refund = readFileSync(
      join(UPSTREAM, "skills", "refund", "fixtures", "refund-receipt-proof-ready.yaml"),
      "utf8",
    );
    const kid = /RUNX_RECEIPT_VERIFY_KID: (\S+)/.exec(refund)?.[1] ?? "";
    const key = /RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64: (\S+)/.exec(refund)?.[1] ?? "";
    expect(kid).not.toBe("");

    seededEcho(seeds);
    const unkeyed = await runx(ws, ["harness", "skills/echo/fixtures/seeded.yaml", "--json"]);
    expect(unkeyed.code).toBe(1);
    expect(unkeyed.json<HarnessReport>().assertion_errors[0]).toContain(
      "receipt proof invalid under the fixture's signature policy: signature_",
    );

    seededEcho(
      seeds,
      `env:\n  RUNX_RECEIPT_VERIFY_KID: ${kid}\n  RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64: ${key}\n`,
    );
    const keyed = await runx(ws, ["harness", "skills/echo/fixtures/seeded.yaml", "--json"]);
    expect(keyed.code).toBe(0);
    expect(keyed.json()).toMatchObject({ schema: "runx.receipt.v1" });
  });
});
