/**
 * Journeys: governed effects approved from the console. An operator starts a governed skill
 * from its catalog page (which previews the approval it will ask for); a second operator
 * reads the approval card — the payload and the provider evidence (provider, operation,
 * target, amount, idempotency key, plan digest, releasing approval) — approves it with
 * confirmation; the run seals, the effect's step receipt is signed with the approver's
 * decision, and `runx history --detail` (the built CLI) shows the same evidence lines the
 * card showed, from the same runtime function. `approveGovernedEffect` is the whole journey;
 * each effect (a send-as message; an x402 spend against a loopback paid endpoint that counts
 * the payments it receives) is one case of it.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  paymentAuthority,
  startX402Endpoint,
} from "../packages/runtime/src/testing/x402-endpoint.js";
import { ROOT } from "../scripts/console-services.mjs";
import { checkLayouts } from "./harness/a11y.js";
import { decideWithConfirmation, inboxCard, denyPendingOf } from "./harness/approvals.js";
import { launchChromium } from "./harness/chromium.js";
import {
  apiQuery,
  apiSession,
  eventually,
  journey,
  pendingFor,
  stack,
  startFromSkillPage,
  waitForRunStatus,
} from "./harness/journey.js";

const RUNX = join(ROOT, "packages", "runtime", "bin", "runx.cjs");

let browser: Browser;
/** Runs this file started: whatever is still pending at the end is denied. */
const started: string[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await denyPendingOf(started);
});

/** One governed effect to approve from the console. */
interface EffectCase {
  /** Journey and screenshot name. */
  name: string;
  /** The workspace skill (`skills/<skill>`). */
  skill: string;
  /** Start-form inputs, as typed (typed inputs as JSON text). */
  inputs: Record<string, string>;
  /** The step that performs the effect. */
  effectStep: string;
  /** The grant and its holder the card's gate facts name (`provider.mutate` effects). */
  grant?: { ref: string; heldBy: string };
  /** Text the catalog page's approval preview must show. */
  catalogShows: string[];
  /** Payload paths the card must show, with their exact values (`audience.ref`: …). */
  payload: Record<string, string>;
  /** Payload paths that must show a full sha256 digest (`content_digest`). */
  digests?: string[];
  /** Evidence lines the card and `history --detail` must show (label → value prefix). */
  evidence: Record<string, string>;
  /** Checks of the sealed run's result. */
  result(result: unknown): void;
}

interface EffectFacts {
  amount: { text: string } | null;
  fields: Array<{ path: string; label: string; value: string }>;
}
interface PendingWithPreview {
  gateId: string;
  preview: { effect: EffectFacts | null } | null;
}
interface Dag {
  nodes: Array<{
    id: string;
    name: string;
    status: string;
    approvals: Array<{ approver: string }>;
  }>;
}
interface HistoryDetail {
  effects: Array<{ step_id: string; evidence: string; facts: EffectFacts }>;
}

/** `runx history --detail <runId> --json` on the stack's workspace (the built CLI). */
function historyDetail(runId: string): HistoryDetail {
  const result = spawnSync(process.execPath, [RUNX, "history", "--detail", runId, "--json"], {
    cwd: stack().workspace,
    env: {
      PATH: process.env.PATH,
      HOME: join(stack().workspace, "home"),
      RUNX_HOME: join(stack().workspace, "home", ".runx"),
      LANG: process.env.LANG ?? "C.UTF-8",
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as HistoryDetail;
}

/** The whole journey for one effect: catalog → start → read the card → approve → receipts. */
async function approveGovernedEffect(c: EffectCase): Promise<void> {
  const { admin, approver } = stack();
  await journey(browser, c.name, async (j) => {
    const initiator = await j.signIn(admin);
    await initiator.goto(`${stack().consoleUrl}/skills?q=${encodeURIComponent(c.skill)}`);
    const listed = initiator.getByRole("listitem").filter({ hasText: c.skill });
    expect(await listed.first().getByTestId("catalog-approval").innerText()).toContain(
      c.catalogShows[0],
    );
    await checkLayouts(initiator, "catalog", j);
    await initiator.goto(`${stack().consoleUrl}/skills/${c.skill}`);
    const previews = initiator.getByTestId("approval-previews");
    await previews.waitFor({ timeout: 20_000 });
    const catalogText = await previews.innerText();
    for (const text of c.catalogShows) expect(catalogText).toContain(text);
    // No adapter step anywhere in the graph: the form does not offer to allow spawning.
    expect(await initiator.getByLabel("Allow spawn").count()).toBe(0);
    await checkLayouts(initiator, "catalog-skill", j);

    const runId = await startFromSkillPage(initiator, c.skill, c.inputs);
    started.push(runId);
    await waitForRunStatus(initiator, "needs_approval");

    const session = await apiSession(approver);
    const pending = (await pendingFor(session, runId)) as unknown as PendingWithPreview;
    const facts = pending.preview?.effect;
    expect(facts, "the runtime previews the effect's provider evidence").toBeTruthy();

    const page = await j.signIn(approver);
    const card = await inboxCard(page, runId);
    for (const [path, value] of Object.entries(c.payload)) {
      expect(await card.locator(`dd[data-path="${path}"]`).innerText()).toBe(value);
    }
    for (const path of c.digests ?? []) {
      expect(await card.locator(`dd[data-path="${path}"]`).innerText()).toMatch(
        /^sha256:[0-9a-f]{64}$/,
      );
    }
    // Every evidence line the runtime built is on the card once: in the evidence list in full,
    // or named in the "shown above" note with its value in the payload or the amount line.
    const aboveNote = card.getByTestId("effect-facts-above");
    const above = (await aboveNote.count()) > 0 ? (await aboveNote.innerText()).toLowerCase() : "";
    const previewText = await card.getByTestId("effect-preview").innerText();
    for (const field of facts!.fields) {
      const row = card.locator(`dd[data-path="effect.${field.path}"]`);
      if ((await row.count()) === 1) {
        expect(await row.innerText()).toBe(field.value);
        expect(above, `${field.label} is listed and also named as shown above`).not.toContain(
          field.label.toLowerCase(),
        );
      } else {
        expect(above, `${field.label} is neither listed nor named`).toContain(
          field.label.toLowerCase(),
        );
        expect(previewText).toContain(field.path === "amount" ? facts!.amount!.text : field.value);
      }
    }
    const evidenceText = await card.getByTestId("effect-facts").innerText();
    for (const [label, value] of Object.entries(c.evidence)) {
      expect(`${evidenceText}\n${above}`.toLowerCase()).toContain(label.toLowerCase());
      expect(previewText).toContain(value);
    }
    expect(evidenceText).toContain(pending.gateId.replace("provider-effect:", ""));
    // Each evidence line appears once: the gate facts below do not repeat it.
    const gateFacts = await card.locator("dl.facts > dt").allInnerTexts();
    for (const label of ["Provider", "Operation", "Target", "Plan digest", "Amount"]) {
      expect(gateFacts, `the gate facts repeat ${label}`).not.toContain(label);
    }
    // A provider mutation's card names the grant it runs under and who holds it.
    if (c.grant !== undefined) {
      const facts = await card.locator("dl.facts").innerText();
      expect(facts).toContain(`Provider grant\n${c.grant.ref}`);
      expect(facts).toContain(`Grant held by\n${c.grant.heldBy}`);
    }
    await checkLayouts(page, "approval-card", j);

    await decideWithConfirmation(card, "Approve", `${c.name}: preview read and checked`);
    await waitForRunStatus(initiator, "sealed", 30_000);
    const detail = await eventually("the approved run to seal", async () => {
      const d = await apiQuery<{ run: { status: string; disposition: string }; result: unknown }>(
        session,
        "runs.get",
        { runId },
      );
      return d.run.status === "sealed" ? d : undefined;
    });
    expect(detail.run.disposition).toBe("closed");
    c.result(detail.result);

    // The effect's step receipt verifies under the API's key and carries the approver.
    const dag = await apiQuery<Dag>(session, "receipts.dag", { runId });
    const effect = dag.nodes.find((n) => n.name.endsWith(c.effectStep));
    expect(effect, `a receipt of step ${c.effectStep}`).toBeDefined();
    expect(effect!.status).toBe("verified");
    expect(
      dag.nodes.some((n) => n.approvals.some((a) => a.approver.includes(approver.username))),
    ).toBe(true);

    // history --detail shows the same evidence, checked against the signed output commitment.
    const history = historyDetail(runId);
    const sealed = history.effects.find((e) => e.step_id === c.effectStep);
    expect(sealed?.evidence).toBe("signed");
    const byLabel = (f: EffectFacts) => new Map(f.fields.map((x) => [x.label, x.value]));
    const before = byLabel(facts!);
    const after = byLabel(sealed!.facts);
    for (const label of ["Provider", "Operation", "Target", "Amount", "Idempotency key"]) {
      expect(after.get(label)).toBe(before.get(label));
    }
    expect(after.get("Plan digest")).toBe(before.get("Plan digest"));
    expect(after.get("Releasing approval")).toContain(`approved by ${approver.username}`);
    expect(after.get("Releasing approval")).toContain(pending.gateId);
  });
}

it("approves a send-as message from the console after reading its audience, channel, content digest and consent basis", async () => {
  const key = `june-${Date.now()}`;
  await approveGovernedEffect({
    name: "send-as-approve",
    skill: "send-as",
    inputs: {
      principal: "acct_acme",
      channel: "email",
      audience: '{"type":"list","ref":"list:june-subscribers"}',
      content: "June newsletter: three new skills and a receipts explainer.",
      consent_basis: "opted in at signup",
      idempotency_key: key,
    },
    effectStep: "send",
    grant: { ref: "runx:grant:outbox", heldBy: "runx:principal:local_runtime" },
    catalogShows: [
      "message.send on the channel input at outbox",
      "Message: audience, channel, content digest, consent basis",
      "Idempotency key",
      "Plan digest",
      "Releasing approval",
    ],
    payload: {
      principal: "acct_acme",
      "audience.type": "list",
      "audience.ref": "list:june-subscribers",
      consent_basis: "opted in at signup",
    },
    digests: ["content_digest"],
    evidence: {
      Provider: "outbox",
      Operation: "message.send",
      Target: "email",
      "Idempotency key": key,
      "Releasing approval": "pending",
    },
    result(result) {
      expect(result).toMatchObject({
        send_result: { schema: "runx.send_as.result.v1", status: "sent", idempotency_key: key },
      });
    },
  });
});

it("approves an x402 spend from the console after reading its amount, payee and key, and pays once", async () => {
  const endpoint = await startX402Endpoint();
  try {
    const authority = paymentAuthority(125, "authority-term:payment:e2e");
    await approveGovernedEffect({
      name: "spend-approve",
      skill: "spend",
      inputs: {
        resource_url: `${endpoint.server.origin}/search`,
        parent_payment_authority: JSON.stringify(authority),
        idempotency_seed: `e2e-spend-${Date.now()}`,
        realm: "test",
      },
      effectStep: "pay",
      catalogShows: [
        "an x402 payment for the resource_url input",
        "Amount",
        "Payee",
        "Idempotency key",
      ],
      payload: { payee: "merchant:demo", operation: "search.paid" },
      evidence: {
        Provider: "x402",
        Operation: "search.paid",
        Target: "merchant:demo",
        "Idempotency key": "payment:",
        "Releasing approval": "pending",
      },
      result(result) {
        expect(endpoint.paid).toHaveLength(1);
        expect(result).toMatchObject({
          x402_payment: {
            provider: "x402",
            status: "settled",
            money_moved: true,
            amount: { units: 125, unit: "USD" },
          },
        });
      },
    });
    // The approved payment reached the endpoint exactly once.
    expect(endpoint.paid).toHaveLength(1);
  } finally {
    await endpoint.server.close();
  }
});
