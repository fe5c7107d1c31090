/**
 * The payment planning tools of the `spend` and `settle-invoice` skills, as the catalog
 * registers them: `payment.quote` (`quote.ts`), `payment.reserve` (`reserve.ts`) and
 * `payment.invoice_plan` (`invoice-plan.ts`). None of them moves money, contacts a rail or
 * approves anything.
 */
import type { NativeTool } from "../types.js";
import { paymentInvoicePlanTool } from "./invoice-plan.js";
import { paymentQuoteTool } from "./quote.js";
import { paymentReserveTool } from "./reserve.js";

/** The payment planning tools. */
export function paymentTools(): NativeTool[] {
  return [paymentQuoteTool, paymentReserveTool, paymentInvoicePlanTool];
}
