/**
 * What the CLI writes cannot steer the terminal that shows it. Skill names, summaries,
 * results, fixture case names, registry descriptions and error messages all come from files
 * and processes runx does not control; printed raw, an escape sequence among them could
 * clear the screen, move the cursor to overwrite a verdict ("sealed" over "blocked"), set
 * the window title, or write to the clipboard (OSC 52), and bidirectional overrides could
 * reorder what a reader sees.
 *
 * So every write of `ctx.out` / `ctx.err` passes through `terminalSafe`: control characters
 * other than newline and tab, C1 controls and the bidi embedding, override and isolate
 * characters are replaced by their `\uXXXX` spelling. The only sequences that survive are
 * the colour codes the CLI's own styler emits (SGR reset, bold, dim, red, green: harmless
 * if data carries them too). A command that redraws a status line on a terminal does it
 * through `statusLine`, which adds the two cursor controls itself around safe text.
 *
 * In `--json` output the replacement keeps the document valid and its value unchanged:
 * JSON.stringify escapes C0 controls already, and the others can occur only inside strings,
 * where `\uXXXX` denotes the same character.
 */

const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /\u001b\[(?:0|1|2|31|32)m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function spell(match: string): string {
  if (match.length > 1) return match; // one of the styler's colour codes
  return `\\u${match.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `text` with every character that could steer a terminal spelled out as `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, spell);
}

/** Erase the terminal's current line and return to its start (a status line's redraw). */
const REDRAW = "\u001b[2K\r";

/** A status line for a terminal: the current line erased, then `text` made safe ("" clears it). */
export function statusLine(text: string): string {
  return `${REDRAW}${terminalSafe(text)}`;
}
