/**
 * Typed reads of a kernel fixture document. A field of the wrong shape fails the evaluation
 * (KERNEL_EVALUATION_FAILED, message "kernel fixture evaluation failed") naming its path.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";

/** The fixed wrapper message of a failed kernel evaluation. */
export const EVALUATION_FAILED = "kernel fixture evaluation failed";

/** Fails the evaluation, naming the field and what was wrong with it. */
export function evaluationFailed(path: string, detail: string): never {
  throw new RuntimeError("KERNEL_EVALUATION_FAILED", EVALUATION_FAILED, { path, detail });
}

/** A reader over one object of the document, tracking the key path for errors. */
export class Fields {
  constructor(
    readonly value: JsonObject,
    readonly path: string,
  ) {}

  static of(value: JsonValue | undefined, path: string): Fields {
    if (!isJsonObject(value)) evaluationFailed(path, "must be an object");
    return new Fields(value, path);
  }

  private at(key: string): string {
    return this.path === "" ? key : `${this.path}.${key}`;
  }

  /** Present and not null: an optional field given as `null` counts as absent. */
  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  /** Fails on any key outside `allowed` (the shapes upstream reads strictly). */
  only(allowed: readonly string[]): this {
    for (const key of Object.keys(this.value))
      if (!allowed.includes(key)) evaluationFailed(this.at(key), "is not a known field");
    return this;
  }

  raw(key: string): JsonValue | undefined {
    return this.value[key];
  }

  object(key: string): Fields {
    return Fields.of(this.value[key], this.at(key));
  }

  optObject(key: string): Fields | undefined {
    return this.has(key) ? this.object(key) : undefined;
  }

  string(key: string): string {
    const v = this.value[key];
    if (typeof v !== "string") evaluationFailed(this.at(key), "must be a string");
    return v;
  }

  optString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }

  nonEmpty(key: string): string {
    const v = this.string(key);
    if (v === "") evaluationFailed(this.at(key), "must not be empty");
    return v;
  }

  optNonEmpty(key: string): string | undefined {
    return this.has(key) ? this.nonEmpty(key) : undefined;
  }

  nonEmptyStrings(key: string): string[] {
    return this.strings(key).map((v, i) => {
      if (v === "") evaluationFailed(`${this.at(key)}[${i}]`, "must not be empty");
      return v;
    });
  }

  /** A whole number in `[min, max]` (upstream's integer field types). */
  integer(key: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.number(key);
    if (!Number.isInteger(v) || v < min || v > max)
      evaluationFailed(this.at(key), `must be an integer in [${min}, ${max}]`);
    return v;
  }

  /** An unsigned 32-bit count. */
  u32(key: string): number {
    return this.integer(key, 0, 4294967295);
  }

  optU32(key: string): number | undefined {
    return this.has(key) ? this.u32(key) : undefined;
  }

  number(key: string): number {
    const v = this.value[key];
    if (typeof v !== "number") evaluationFailed(this.at(key), "must be a number");
    return v;
  }

  optNumber(key: string): number | undefined {
    return this.has(key) ? this.number(key) : undefined;
  }

  optInteger(key: string): number | undefined {
    return this.has(key) ? this.integer(key) : undefined;
  }

  optBoolean(key: string): boolean | undefined {
    if (!this.has(key)) return undefined;
    const v = this.value[key];
    if (typeof v !== "boolean") evaluationFailed(this.at(key), "must be a boolean");
    return v;
  }

  array(key: string): JsonValue[] {
    const v = this.value[key];
    if (!Array.isArray(v)) evaluationFailed(this.at(key), "must be an array");
    return v;
  }

  optArray(key: string): JsonValue[] | undefined {
    return this.has(key) ? this.array(key) : undefined;
  }

  objects(key: string): Fields[] {
    return this.array(key).map((v, i) => Fields.of(v, `${this.at(key)}[${i}]`));
  }

  optObjects(key: string): Fields[] | undefined {
    return this.has(key) ? this.objects(key) : undefined;
  }

  strings(key: string): string[] {
    return this.array(key).map((v, i) => {
      if (typeof v !== "string") evaluationFailed(`${this.at(key)}[${i}]`, "must be a string");
      return v;
    });
  }

  optStrings(key: string): string[] | undefined {
    return this.has(key) ? this.strings(key) : undefined;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T {
    const v = this.string(key);
    if (!(allowed as readonly string[]).includes(v))
      evaluationFailed(this.at(key), `must be one of ${allowed.join(", ")}`);
    return v as T;
  }
}
