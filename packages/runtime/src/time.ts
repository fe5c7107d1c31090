/**
 * Timestamps as text, written from the UTC fields.
 *
 * `Date.prototype.toISOString` makes V8 set up the local time zone on its first call in a
 * process (it reads /etc/localtime and ICU's zone data: ~0.3 ms here, more with `TZ` set), which
 * a short CLI command pays for a UTC string. The UTC getters never touch the zone.
 */

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * The last second written and its text up to the seconds (`YYYY-MM-DDTHH:mm:ss`): a process that
 * stamps many records stamps most of them within a second it has already written, and those
 * need only their milliseconds.
 */
let memoSecond = Number.NaN;
let memoText = "";

/**
 * The string `date.toISOString()` returns (`YYYY-MM-DDTHH:mm:ss.sssZ`), without the time-zone
 * setup. Years outside 0000–9999 (written ±YYYYYY) and invalid dates (RangeError) are left to
 * toISOString itself.
 */
export function isoTimestamp(date: Date): string {
  const time = date.getTime();
  const second = Math.floor(time / 1000);
  // NaN (an invalid date) never equals the memo, so it reaches toISOString's RangeError.
  if (second !== memoSecond) {
    const year = date.getUTCFullYear();
    if (!(year >= 0 && year <= 9999)) return date.toISOString();
    memoText =
      `${String(year).padStart(4, "0")}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}` +
      `T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}`;
    memoSecond = second;
  }
  const ms = time - second * 1000;
  return `${memoText}.${ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : ms}Z`;
}

/** `isoTimestamp` to the second (`YYYY-MM-DDTHH:mm:ssZ`): receipts' and dispatch records' times. */
export function secondsTimestamp(date: Date): string {
  return isoTimestamp(date).replace(/\.\d{3}Z$/, "Z");
}
