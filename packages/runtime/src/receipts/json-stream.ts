/**
 * A pull reader over JSON text that arrives in pieces (a file or stdin read in chunks), for
 * documents too large to hold at once: the caller walks the containers it wants to stream
 * member by member (`members`, `elements`) and takes every other value whole (`value`), so
 * at most one member's text is held at a time. Each whole value is bounded by `maxValueChars`
 * and parsed by `JSON.parse`, which validates it.
 */

/** Malformed or truncated JSON, with the line it was found on. */
export class JsonStreamError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

const WS = new Set([" ", "\t", "\n", "\r"]);
/** Characters that end a number or a literal. */
const DELIMITERS = new Set([",", "}", "]", " ", "\t", "\n", "\r"]);
/** Consumed text kept before it is dropped from the buffer. */
const COMPACT_AT = 1 << 16;

/** Reads one JSON document from `source` piece by piece. */
export class JsonStreamReader {
  private buf = "";
  private pos = 0;
  /** Line of `buf[0]`. */
  private lineBase = 1;
  private ended = false;
  private readonly pieces: AsyncIterator<string | Uint8Array>;
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(
    source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
    private readonly maxValueChars: number,
  ) {
    if (Symbol.asyncIterator in source) this.pieces = source[Symbol.asyncIterator]();
    else {
      const pieces = source[Symbol.iterator]();
      this.pieces = { next: () => Promise.resolve(pieces.next()) };
    }
  }

  /** The line the reader is at. */
  line(): number {
    let line = this.lineBase;
    for (let i = this.buf.indexOf("\n"); i >= 0 && i < this.pos; i = this.buf.indexOf("\n", i + 1))
      line++;
    return line;
  }

  private fail(message: string): never {
    throw new JsonStreamError(message, this.line());
  }

  private async more(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.pieces.next();
    if (next.done === true) {
      this.ended = true;
      const tail = this.decoder.decode();
      this.buf += tail;
      return tail.length > 0;
    }
    const piece = next.value;
    // A multi-byte character split across pieces is held by the decoder until it is whole.
    this.buf += typeof piece === "string" ? piece : this.decoder.decode(piece, { stream: true });
    return true;
  }

  /** Drops consumed text (only between values: a value's start must stay in the buffer). */
  private compact(): void {
    if (this.pos < COMPACT_AT) return;
    this.lineBase = this.line();
    this.buf = this.buf.slice(this.pos);
    this.pos = 0;
  }

  /** The next character that is not whitespace (not consumed), or undefined at the end. */
  async peek(): Promise<string | undefined> {
    for (;;) {
      while (this.pos < this.buf.length && WS.has(this.buf[this.pos] as string)) this.pos++;
      if (this.pos < this.buf.length) return this.buf[this.pos];
      this.compact();
      if (!(await this.more())) return undefined;
    }
  }

  private async expect(ch: string, what: string): Promise<void> {
    const next = await this.peek();
    if (next !== ch) this.fail(next === undefined ? `unexpected end, ${what}` : what);
    this.pos++;
  }

  /** Index just past the complete value starting at `this.pos`, reading on as needed. */
  private async valueEnd(): Promise<number> {
    const start = this.pos;
    const tooLong = (at: number): void => {
      if (at - start > this.maxValueChars)
        this.fail(`a value is longer than ${this.maxValueChars} characters`);
    };
    let i = start;
    let depth = 0;
    for (;;) {
      if (i >= this.buf.length) {
        tooLong(i);
        if (!(await this.more())) {
          // A number or literal may end the text; anything open may not.
          if (depth === 0 && this.buf[start] !== '"' && i > start) return i;
          this.fail("unexpected end of the document");
        }
        continue;
      }
      const c = this.buf[i] as string;
      if (c === '"') {
        // To the closing quote: one not preceded by an odd run of backslashes.
        let j = i + 1;
        for (;;) {
          const q = this.buf.indexOf('"', j);
          if (q < 0) {
            tooLong(this.buf.length);
            if (!(await this.more())) this.fail("unexpected end inside a string");
            continue;
          }
          let slashes = 0;
          while (this.buf[q - 1 - slashes] === "\\") slashes++;
          if (slashes % 2 === 0) {
            j = q;
            break;
          }
          j = q + 1;
        }
        i = j + 1;
        if (depth === 0) return i;
        continue;
      }
      // A number or literal ends at the first delimiter (a container ends at its close).
      if (depth === 0 && i > start && DELIMITERS.has(c)) return i;
      if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth < 0) this.fail(`unexpected "${c}"`);
        if (depth === 0) return i + 1;
      } else if (depth === 0 && DELIMITERS.has(c)) this.fail(`unexpected "${c}"`);
      i++;
    }
  }

  /** The next value, whole. */
  async value(): Promise<unknown> {
    this.compact();
    if ((await this.peek()) === undefined) this.fail("unexpected end of the document");
    const start = this.pos;
    const end = await this.valueEnd();
    const text = this.buf.slice(start, end);
    try {
      const value: unknown = JSON.parse(text);
      this.pos = end;
      return value;
    } catch (error) {
      this.fail(error instanceof Error ? error.message : "invalid JSON value");
    }
  }

  /**
   * The keys of the object that comes next, one at a time; the caller reads (or streams)
   * each key's value before asking for the next key.
   */
  async *members(): AsyncGenerator<string> {
    await this.expect("{", 'expected "{"');
    for (let first = true; ; first = false) {
      if ((await this.peek()) === "}") {
        this.pos++;
        return;
      }
      if (!first) await this.expect(",", 'expected "," or "}"');
      if ((await this.peek()) !== '"') this.fail("expected an object key");
      const key = (await this.value()) as string;
      await this.expect(":", 'expected ":"');
      yield key;
    }
  }

  /** The elements of the array that comes next: the caller reads each before the next. */
  async *elements(): AsyncGenerator<number> {
    await this.expect("[", 'expected "["');
    for (let n = 0; ; n++) {
      if ((await this.peek()) === "]") {
        this.pos++;
        return;
      }
      if (n > 0) await this.expect(",", 'expected "," or "]"');
      yield n;
    }
  }

  /** Fails unless only whitespace is left. */
  async end(): Promise<void> {
    if ((await this.peek()) !== undefined) this.fail("unexpected text after the document");
  }
}
