/** The x402 rail's tools: challenge, quote, reserve (x402-tools.ts) and pay (x402-pay.ts). */
import type { NativeTool } from "../types.js";
import { paymentX402PayTool } from "./x402-pay.js";
import {
  paymentX402ChallengeTool,
  paymentX402QuoteTool,
  paymentX402ReserveTool,
} from "./x402-tools.js";

/** The x402 rail tools, in graph order. */
export function x402Tools(): NativeTool[] {
  return [
    paymentX402ChallengeTool,
    paymentX402QuoteTool,
    paymentX402ReserveTool,
    paymentX402PayTool,
  ];
}
