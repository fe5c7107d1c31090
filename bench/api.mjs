// Operator-API benchmark against the built API (apps/api/dist/main.js, a real HTTP server with
// its worker pool) over a scratch workspace whose state store is seeded with --runs runs
// (default 100,000). Prints p50/p95 of:
//   runs.list first page and a deep page   server time (the procedure's work, in-process, through
//                                          the same runtime call, with the total count of matching
//                                          runs every page carries) and the HTTP round trip to the
//                                          real server; baseline: the bare keyset SELECT on the
//                                          same index, same database.          target p95 <= 50 ms
//   runs.list filters                      server time of the previous page, each outcome filter,
//                                          a skill search, search + outcome, status + skill and
//                                          "waiting for me" (its count stops at 1,000).
//                                                                              target p95 <= 50 ms
//   approve-to-sealed                      approvals.decide over HTTP until the run is sealed (the
//                                          continuation runs in the API's worker pool); baseline:
//                                          the same decide + release in-process.  target <= 1 s
// Usage: npm run build && node bench/api.mjs [--runs N] [--samples N] [--approvals N] [--json]
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const { fetch } = globalThis;

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : fallback;
};
const RUNS = Number(arg("--runs", "100000"));
const SAMPLES = Number(arg("--samples", "200"));
const APPROVALS = Number(arg("--approvals", "20"));
const JSON_OUT = argv.includes("--json");
const PAGE = 50;

const { createRuntime, deriveDetailedOutcome } = await import(
  join(repo, "packages/runtime/dist/index.js")
);
const Database = createRequire(join(repo, "packages/runtime/package.json"))("better-sqlite3");

const root = mkdtempSync(join(tmpdir(), "runx-bench-api-"));
const home = join(root, ".home");
mkdirSync(join(root, "skills"), { recursive: true });
cpSync(join(repo, "skills/echo"), join(root, "skills/echo"), { recursive: true });
mkdirSync(join(root, "skills/gated"), { recursive: true });
writeFileSync(join(root, "skills/gated/SKILL.md"), "---\nname: gated\n---\nEcho after approval.\n");
writeFileSync(
  join(root, "skills/gated/X.yaml"),
  [
    "runners:",
    "  default:",
    "    type: graph",
    "    inputs:",
    "      message: {type: string, required: true}",
    "    graph:",
    "      name: gated",
    "      result_from: [say]",
    "      steps:",
    "        - id: release",
    "          run: {type: approval}",
    "          inputs: {reason: Release the echo.}",
    "        - id: say",
    "          skill: ../echo",
    "          inputs: {message: $input.message}",
    "",
  ].join("\n"),
);
const env = { PATH: process.env.PATH, HOME: home };
const options = { workspaceRoot: root, runxHome: home, env };
const runtime = createRuntime(options);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const stats = (xs) => ({ p50: +pct(xs, 50).toFixed(2), p95: +pct(xs, 95).toFixed(2) });
const time = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const results = {};

try {
  // Operators and a token; this also creates and migrates the state store.
  const alice = await runtime.console.operators.add({
    username: "alice",
    role: "approver",
    password: "correct horse battery",
  });
  const bob = await runtime.console.operators.add({
    username: "bob",
    role: "approver",
    password: "correct horse battery",
  });
  const aliceToken = runtime.console.operators.createToken(alice.id, "bench").token;
  const bobToken = runtime.console.operators.createToken(bob.id, "bench").token;

  // Seed the run table (one transaction; statuses, dispositions and skills spread like a busy
  // project): paused runs carry their requests, a third of the runs were started by alice in
  // the console, and the outcome column is what the state store would have written.
  const db = new Database(runtime.paths.stateDb);
  const seedStart = performance.now();
  const insert = db.prepare(
    `insert into runs (id, skill_name, runner, skill_ref, package_dir, package_digest, status,
       disposition, receipt_id, requests_json, inputs_digest, created_at, updated_at, created_ms,
       outcome)
     values (?, ?, 'default', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const initiate = db.prepare(
    `insert into run_initiators (run_id, operator_id, username, created_at, allow_spawn)
     values (?, ?, 'alice', ?, 0)`,
  );
  const statuses = ["sealed", "sealed", "sealed", "failure", "needs_agent", "needs_approval"];
  const sealedAs = ["closed", "closed", "closed", "failed", "declined", "killed", "timed_out"];
  const approval = JSON.stringify([
    { id: "release", kind: "approval", gate: { id: "release", reason: "Release the echo." } },
  ]);
  const asks = [
    JSON.stringify([{ id: "assess", kind: "agent_act", invocation: { task: "assess" } }]),
    JSON.stringify([{ id: "q", kind: "input", questions: [] }]),
  ];
  const base = Date.parse("2025-01-01T00:00:00Z");
  db.transaction(() => {
    for (let i = 0; i < RUNS; i++) {
      const skill = `skill-${i % 40}`;
      const at = new Date(base + i * 1000).toISOString();
      const id = `run_seed_${i.toString(16).padStart(16, "0")}`;
      const status = statuses[i % statuses.length];
      const disposition =
        status === "sealed"
          ? sealedAs[Math.floor(i / statuses.length) % sealedAs.length]
          : status === "failure"
            ? "blocked"
            : "deferred";
      const requests =
        status === "needs_approval"
          ? approval
          : status === "needs_agent"
            ? asks[Math.floor(i / statuses.length) % 2]
            : null;
      const outcome = deriveDetailedOutcome({
        status,
        disposition,
        requestKinds: requests === null ? [] : JSON.parse(requests).map((r) => r.kind),
      });
      insert.run(
        id,
        skill,
        `skills/${skill}`,
        `skills/${skill}`,
        `sha256:${"a".repeat(64)}`,
        status,
        disposition,
        `sha256:${i.toString(16).padStart(64, "0")}`,
        requests,
        `sha256:${"b".repeat(64)}`,
        at,
        at,
        base + i * 1000,
        outcome,
      );
      if (i % 3 === 0) initiate.run(id, alice.id, at);
    }
  })();
  db.pragma("optimize");
  results.seed = { runs: RUNS, ms: Math.round(performance.now() - seedStart) };

  // A cursor deep in the list: walk to the middle once (untimed).
  let deepCursor = null;
  {
    let cursor = null;
    const pages = Math.floor(RUNS / 2 / 500);
    for (let i = 0; i < pages; i++) {
      cursor = runtime.console.runs.list({ limit: 500, ...(cursor ? { cursor } : {}) }).nextCursor;
    }
    deepCursor = cursor;
  }
  const deepRow = runtime.console.runs.list({ limit: 1, cursor: deepCursor }).items[0];

  // Baseline: the bare keyset SELECT on the same index.
  const first = db.prepare(`select * from runs order by created_ms desc, id desc limit ?`);
  const deep = db.prepare(
    `select * from runs where (created_ms, id) < (?, ?)
     order by created_ms desc, id desc limit ?`,
  );
  const deepMs = Date.parse(deepRow.createdAt);
  const measureSync = (fn) => {
    for (let i = 0; i < 20; i++) fn();
    const xs = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      fn();
      xs.push(performance.now() - t);
    }
    return stats(xs);
  };
  results.list_baseline_first = measureSync(() => first.all(PAGE));
  results.list_baseline_deep = measureSync(() => deep.all(deepMs, deepRow.id, PAGE + 1));
  results.list_server_first = measureSync(() => runtime.console.runs.list({ limit: PAGE }));
  results.list_server_deep = measureSync(() =>
    runtime.console.runs.list({ limit: PAGE, cursor: deepCursor }),
  );
  results.list_server_deep_filtered = measureSync(() =>
    runtime.console.runs.list({ limit: PAGE, status: "needs_agent", skill: "skill-4" }),
  );
  const deepPage = runtime.console.runs.list({ limit: PAGE, cursor: deepCursor });
  results.list_server_prev = measureSync(() =>
    runtime.console.runs.list({ limit: PAGE, cursor: deepPage.prevCursor }),
  );
  results.filters = {};
  const filters = {
    "outcome completed": { outcome: "completed" },
    "outcome failed": { outcome: "failed" },
    "outcome declined": { outcome: "declined" },
    "outcome blocked": { outcome: "blocked" },
    "outcome paused_for_input": { outcome: "paused_for_input" },
    "outcome timed_out, deep": { outcome: "timed_out", cursor: deepCursor },
    "skill search 'KILL-1'": { skillSearch: "KILL-1" },
    "skill search + outcome declined": { skillSearch: "skill-2", outcome: "declined" },
    "skill search, no match": { skillSearch: "nothing-like-it" },
    "waiting for me (bob)": { waitingForMe: true },
  };
  for (const [label, filter] of Object.entries(filters)) {
    const page = runtime.console.runs.list({ limit: PAGE, ...filter }, bob);
    results.filters[label] = {
      ...measureSync(() => runtime.console.runs.list({ limit: PAGE, ...filter }, bob)),
      total: `${page.total}${page.totalCapped ? "+" : ""}`,
    };
  }

  // The real server.
  const api = spawn(process.execPath, [join(repo, "apps/api/dist/main.js")], {
    env: {
      ...env,
      RUNX_WORKSPACE: root,
      RUNX_HOME: home,
      RUNX_API_PORT: "0",
      RUNX_API_ORIGINS: "http://console.bench",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    api.stdout.on("data", (b) => {
      out += b;
      const m = /runx api listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    api.on("exit", (code) => reject(new Error(`API exited (${code})`)));
  });
  const call = async (token, path, input, method = "GET") => {
    const res = await fetch(
      method === "GET"
        ? `${url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`
        : `${url}/trpc/${path}`,
      {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(method === "POST" ? { body: JSON.stringify(input) } : {}),
      },
    );
    const body = await res.json();
    if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
    return body.result.data;
  };
  try {
    const measureHttp = async (fn) => {
      for (let i = 0; i < 20; i++) await fn();
      const xs = [];
      for (let i = 0; i < SAMPLES; i++) xs.push(await time(fn));
      return stats(xs);
    };
    results.list_http_first = await measureHttp(() =>
      call(aliceToken, "runs.list", { limit: PAGE }),
    );
    results.list_http_deep = await measureHttp(() =>
      call(aliceToken, "runs.list", { limit: PAGE, cursor: deepCursor }),
    );
    results.list_http_outcome = await measureHttp(() =>
      call(bobToken, "runs.list", { limit: PAGE, outcome: "declined" }),
    );

    // Approve-to-sealed through the API: alice starts, bob approves; the decide response
    // carries the continuation's envelope once it sealed (else poll runs.get).
    const approveHttp = [];
    for (let i = 0; i < APPROVALS; i++) {
      const started = await call(
        aliceToken,
        "runs.start",
        { skill: "skills/gated", inputs: { message: `m${i}` } },
        "POST",
      );
      const detail = await call(aliceToken, "runs.get", { runId: started.runId });
      const gateId = detail.pendingApprovals[0].id;
      const t = performance.now();
      const decided = await call(
        bobToken,
        "approvals.decide",
        { runId: started.runId, gateId, decision: "approve", reason: "bench" },
        "POST",
      );
      let status = decided.run?.state === "settled" ? decided.run.envelope.status : "running";
      while (status !== "sealed") {
        await new Promise((r) => setTimeout(r, 5));
        status = (await call(bobToken, "runs.get", { runId: started.runId })).run.status;
      }
      approveHttp.push(performance.now() - t);
    }
    results.approve_to_sealed_http = stats(approveHttp);
  } finally {
    api.kill("SIGTERM");
  }

  // Baseline: decide + release in-process (no HTTP, no worker pool).
  const approveInProcess = [];
  for (let i = 0; i < APPROVALS; i++) {
    const runId = runtime.console.newRunId();
    runtime.console.recordInitiator(runId, alice);
    const paused = await runtime.runSkill({
      ref: "skills/gated",
      inputs: { message: { value: `b${i}` } },
      secretEnv: [],
      runId,
    });
    const gateId = paused.requests[0].id;
    const t = performance.now();
    await runtime.console.approvals.decide(
      { runId, gateId, decision: "approve", reason: "bench" },
      bob,
    );
    const sealed = await runtime.console.approvals.release({ runId, gateId });
    if (sealed.status !== "sealed") throw new Error(`baseline run ${runId} is ${sealed.status}`);
    approveInProcess.push(performance.now() - t);
  }
  results.approve_to_sealed_baseline = stats(approveInProcess);
  db.close();
} finally {
  runtime.close();
  rmSync(root, { recursive: true, force: true });
}

if (JSON_OUT) {
  process.stdout.write(`${JSON.stringify(results)}\n`);
} else {
  const row = (label, s, target) =>
    `${label.padEnd(58)} p50 ${String(s.p50).padStart(8)} ms   p95 ${String(s.p95).padStart(8)} ms${target ? `   (target p95 <= ${target} ms: ${s.p95 <= target ? "met" : "MISSED"})` : ""}`;
  console.log(`seeded ${results.seed.runs} runs in ${results.seed.ms} ms; page size ${PAGE}`);
  console.log(row("runs.list first page   baseline SELECT", results.list_baseline_first));
  console.log(row("runs.list first page   server", results.list_server_first, 50));
  console.log(row("runs.list first page   HTTP round trip", results.list_http_first, 50));
  console.log(row("runs.list deep page    baseline SELECT", results.list_baseline_deep));
  console.log(row("runs.list deep page    server", results.list_server_deep, 50));
  console.log(row("runs.list deep page    HTTP round trip", results.list_http_deep, 50));
  console.log(row("runs.list status+skill filter  server", results.list_server_deep_filtered, 50));
  console.log(row("runs.list previous page (from deep)  server", results.list_server_prev, 50));
  for (const [label, s] of Object.entries(results.filters)) {
    console.log(`${row(`runs.list ${label}`, s, 50)}   (${s.total} runs)`);
  }
  console.log(row("runs.list outcome declined  HTTP round trip", results.list_http_outcome, 50));
  console.log(
    row("approve-to-sealed      baseline in-process", results.approve_to_sealed_baseline),
  );
  console.log(
    row("approve-to-sealed      HTTP + worker pool", results.approve_to_sealed_http, 1000),
  );
}
