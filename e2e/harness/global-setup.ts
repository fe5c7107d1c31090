/**
 * The e2e harness (vitest globalSetup of the `e2e` project), once per run:
 * Chromium present (else fail, saying how to install it) → runtime, API and console built
 * (the console only when its sources changed) → a scratch workspace with the bundled `echo`,
 * `send-as`, `weather-forecast`, `audit-receipt` and `spend`
 * and the `gated`, `xss` and `dispatch` test skills → the API and `next start` on free loopback ports →
 * the first admin created through the printed bootstrap URL in the browser → an approver and
 * a viewer added through the API. Service logs go to e2e/artifacts/logs/.
 */
import { spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import "./context.js";
import { buildWeb } from "../../scripts/build-web.mjs";
import {
  ROOT,
  ensureApiBuilt,
  freePorts,
  startApi,
  startWeb,
  stopService,
} from "../../scripts/console-services.mjs";
import { launchChromium, requireChromium } from "./chromium.js";
import type { E2eStack, E2eUser } from "./context.js";
import { artifactDir, shooter } from "./artifacts.js";
import { data, login, mutate, query, sessionHeaders } from "./trpc.js";

/** The raw 32-byte Ed25519 public key of `seed` (what `runx verify` is given to trust). */
function ed25519PublicKey(seed: Buffer): Buffer {
  // PKCS#8 wrapping of a raw Ed25519 seed; the SPKI export ends with the raw public key.
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const spki = createPublicKey(
    createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }),
  ).export({ format: "der", type: "spki" });
  return spki.subarray(spki.length - 32);
}

function password(): string {
  return `pw-${randomBytes(12).toString("base64url")}`;
}

function ensureRuntimeBuilt(): void {
  if (existsSync(join(ROOT, "packages", "runtime", "dist", "index.js"))) return;
  const result = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0)
    throw new Error("npm run build failed: the e2e harness needs the runtime");
}

/** Creates the scratch workspace with the journeys' skills. */
function makeWorkspace(): string {
  const root = mkdtempSync(join(tmpdir(), "runx-e2e-"));
  mkdirSync(join(root, "skills"));
  mkdirSync(join(root, "home"));
  // The bundled skills the journeys drive (the governed catalog's among them).
  for (const bundled of ["echo", "send-as", "weather-forecast", "audit-receipt", "spend"]) {
    cpSync(join(ROOT, "skills", bundled), join(root, "skills", bundled), { recursive: true });
  }
  // The bundled spend pays public resources only; the journeys' copy pays the loopback
  // endpoint a journey starts.
  const spend = join(root, "skills", "spend", "X.yaml");
  writeFileSync(
    spend,
    readFileSync(spend, "utf8").replace(
      "    type: graph\n",
      "    type: graph\n    allow_private_network: true\n",
    ),
  );
  // Every journey's fixture skill, so a new journey adds a folder and nothing here.
  const fixtures = join(ROOT, "e2e", "fixtures", "skills");
  for (const skill of readdirSync(fixtures)) {
    cpSync(join(fixtures, skill), join(root, "skills", skill), { recursive: true });
  }
  return root;
}

/** Creates the first admin through the bootstrap page, in Chromium. */
async function bootstrapAdmin(bootstrapUrl: string, admin: E2eUser): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const shot = shooter("bootstrap");
    await page.goto(bootstrapUrl);
    await page.getByLabel("Username").fill(admin.username);
    await page.getByLabel("Password").fill(admin.password);
    await shot(page, "bootstrap-form");
    await page.getByRole("button", { name: "Create admin" }).click();
    await page
      .getByTestId("whoami")
      .filter({ hasText: `Signed in as ${admin.username} (admin)` })
      .waitFor({ timeout: 30_000 });
    await shot(page, "signed-in");
  } finally {
    await browser.close();
  }
}

/**
 * A harness failure (no Chromium, a failed build, a service that does not start) is handed
 * to the journeys, which all fail with it — loudly, never skipped — while the rest of the
 * suite still runs and reports.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    const { stack, teardown } = await start();
    project.provide("e2e", stack);
    project.provide("e2eError", null);
    return teardown;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`[e2e] the harness could not start: ${message}\n`);
    project.provide("e2e", null);
    project.provide("e2eError", message);
    return async () => {};
  }
}

async function start(): Promise<{ stack: E2eStack; teardown: () => Promise<void> }> {
  requireChromium();
  ensureRuntimeBuilt();
  ensureApiBuilt((line) => process.stdout.write(`[e2e] ${line}\n`));
  buildWeb({ log: (line) => process.stdout.write(`[e2e] ${line}\n`) });

  const workspace = makeWorkspace();
  const logs = artifactDir("logs");
  const children: ChildProcess[] = [];
  const teardown = async () => {
    for (const child of children.reverse()) await stopService(child);
    if (process.env.RUNX_E2E_KEEP !== "1") rmSync(workspace, { recursive: true, force: true });
  };
  try {
    const [apiPort, webPort] = (await freePorts(2)) as [number, number];
    const seed = randomBytes(32);
    const consoleUrl = `http://127.0.0.1:${webPort}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: join(workspace, "home"),
      LANG: process.env.LANG ?? "C.UTF-8",
      RUNX_WORKSPACE: workspace,
      RUNX_HOME: join(workspace, "home", ".runx"),
      RUNX_API_PORT: String(apiPort),
      RUNX_API_HOST: "127.0.0.1",
      RUNX_API_ORIGINS: consoleUrl,
      RUNX_API_SESSION_SECRET: randomBytes(32).toString("hex"),
      // Production receipt signing (a fresh Ed25519 key per run), so the receipt panel can
      // show "verified" rather than the local signer's "unverified".
      RUNX_RECEIPT_SIGN_KID: "e2e-harness",
      RUNX_RECEIPT_SIGN_ED25519_SEED_BASE64: seed.toString("base64"),
      RUNX_RECEIPT_SIGN_ISSUER_TYPE: "ci",
      // The dispatch journeys select fake-local's test behaviours (`fixture_mode`: questions,
      // noisy or secret-echoing output); honoured for fake-local only.
      RUNX_ADAPTER_FIXTURE_MODES: "1",
    };
    const apiLog = createWriteStream(join(logs, "api.log"));
    const api = await startApi({ env, onLine: (line) => apiLog.write(`${line}\n`) });
    children.push(api.child);
    if (api.bootstrapUrl === null) throw new Error("a fresh API printed no bootstrap URL");
    if (!api.bootstrapUrl.startsWith(`${consoleUrl}/bootstrap?token=`)) {
      throw new Error(`the bootstrap URL ${api.bootstrapUrl} is not on the console ${consoleUrl}`);
    }

    const webLog = createWriteStream(join(logs, "web.log"));
    const web = await startWeb({
      port: webPort,
      apiUrl: api.apiUrl,
      env: { PATH: process.env.PATH, HOME: env.HOME, LANG: env.LANG },
      onLine: (line) => webLog.write(`${line}\n`),
    });
    children.push(web.child);
    // The console must proxy /trpc/* to RUNX_API_URL (read when `next start` runs).
    const proxied = await query(consoleUrl, "auth.status");
    if (proxied.status !== 200) {
      throw new Error(
        `the console at ${consoleUrl} does not proxy /trpc to the API at ${api.apiUrl} ` +
          `(GET /trpc/auth.status answered ${proxied.status}): ${JSON.stringify(proxied.body).slice(0, 300)}`,
      );
    }

    const admin: E2eUser = { username: "ada", password: password(), role: "admin" };
    const approver: E2eUser = { username: "grace", password: password(), role: "approver" };
    const viewer: E2eUser = { username: "victor", password: password(), role: "viewer" };
    await bootstrapAdmin(api.bootstrapUrl, admin);
    const session = await login(api.apiUrl, consoleUrl, admin);
    for (const user of [approver, viewer]) {
      data(await mutate(api.apiUrl, "auth.addOperator", user, sessionHeaders(session, consoleUrl)));
    }

    const stack: E2eStack = {
      consoleUrl,
      apiUrl: api.apiUrl,
      workspace,
      admin,
      approver,
      viewer,
      receiptKey: {
        kid: "e2e-harness",
        publicKeyBase64: ed25519PublicKey(seed).toString("base64"),
      },
    };
    return { stack, teardown };
  } catch (error) {
    await teardown();
    throw error;
  }
}
