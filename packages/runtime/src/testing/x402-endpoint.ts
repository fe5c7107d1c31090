/**
 * A paid x402 endpoint on loopback for tests: without an `X-PAYMENT` header it answers 402
 * with a challenge for `price` USD minor units to `merchant:demo` (operation `search.paid`);
 * with one it records the request in `paid` and answers 200 with an `X-PAYMENT-RESPONSE`
 * settlement proof. `paymentAuthority` is the parent authority such a payment spends from.
 */
import { startTestServer } from "./http-server.js";
import type { ReceivedRequest, TestServer } from "./http-server.js";

export interface X402Endpoint {
  server: TestServer;
  /** The price the next challenge names (minor units, as x402 sends it: a string). */
  price: string;
  /** Whether challenges promise a settlement proof. */
  proof: boolean;
  /** The requests that carried a payment. */
  paid: ReceivedRequest[];
}

export async function startX402Endpoint(
  options: { answerDelayMs?: number } = {},
): Promise<X402Endpoint> {
  const endpoint = { price: "125", proof: true, paid: [] as ReceivedRequest[] } as X402Endpoint;
  endpoint.server = await startTestServer((req, res) => {
    const payment = req.headers["x-payment"];
    if (typeof payment !== "string") {
      const extra: Record<string, string> = { operation: "search.paid" };
      if (endpoint.proof) extra.settlement_proof = "x-payment-response";
      res.writeHead(402, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          x402Version: 1,
          accepts: [
            {
              scheme: "exact",
              network: "runx-local",
              maxAmountRequired: endpoint.price,
              asset: "USD",
              payTo: "merchant:demo",
              resource: `${endpoint.server.origin}${req.url}`,
              extra,
            },
          ],
        }),
      );
      return;
    }
    endpoint.paid.push(req);
    const decoded = JSON.parse(Buffer.from(payment, "base64").toString("utf8")) as {
      payload: { payment_ref: string };
    };
    const proof = Buffer.from(
      JSON.stringify({
        success: true,
        transaction: `tx-${endpoint.paid.length}`,
        payment_ref: decoded.payload.payment_ref,
      }),
    ).toString("base64");
    const answer = () => {
      res.writeHead(200, { "content-type": "application/json", "x-payment-response": proof });
      res.end(JSON.stringify({ results: ["runx"] }));
    };
    if (options.answerDelayMs === undefined) answer();
    else setTimeout(answer, options.answerDelayMs);
  });
  return endpoint;
}

/** A parent payment authority for `search.paid` at `merchant:demo`, capped at `cap` USD minor units. */
export function paymentAuthority(
  cap: number,
  termId = "authority-term:payment:live-demo",
): Record<string, unknown> {
  return {
    term_id: termId,
    principal_ref: { type: "host", uri: "principal:operator:test" },
    resource_ref: { type: "surface", uri: "merchant:demo" },
    resource_family: "effect",
    verbs: ["prepare", "commit"],
    bounds: {
      effect_limits: [
        {
          family: "payment",
          unit: "USD",
          max_per_call_units: cap,
          max_per_run_units: cap,
          channels: ["x402"],
          realm: "test",
          peer: "merchant:demo",
          operation: "search.paid",
          idempotency_required: true,
          recovery_required: true,
          receipt_before_success: true,
          single_use_capability: true,
          authorization_form: "single_use_capability",
        },
      ],
    },
    conditions: [],
    approvals: [],
    capabilities: ["effect_single_use_capability"],
    issued_by_ref: { type: "host", uri: "authority:payment:test" },
  };
}
