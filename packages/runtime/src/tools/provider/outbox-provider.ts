/**
 * The local outbox provider (`outbox`): a deterministic `ProviderDriver` for message sends.
 * `message.send` writes one JSON file per message to `<workspace>/outbox/<channel>/` — the
 * workspace's own data, where an operator can read what was "sent", never runx's state
 * (`.runx/`). `message.read` reads one back by id, which is how a send is verified
 * independently of its mutation acknowledgement.
 *
 * The message id is derived from the provider idempotency key alone, so the same key always
 * names the same file: a second send with that key returns the first result and writes
 * nothing (and a file under that id holding another key is refused, never overwritten).
 */
import { lstat, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../../errors.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { writeFileAtomic } from "../effect-ledger.js";
import { isRecord } from "../packet.js";
import type { Json, JsonRecord, ProviderDriver } from "../types.js";

/** Schema tag of one outbox message file. */
export const OUTBOX_MESSAGE_SCHEMA = "runx.outbox.message.v1";

/** The workspace-relative folder the outbox writes to. */
export const OUTBOX_DIRECTORY = "outbox";

/** The channels a message may be sent on (upstream send-as's channel vocabulary). */
export const OUTBOX_CHANNELS: ReadonlySet<string> = new Set([
  "email",
  "sms",
  "chat",
  "push",
  "webhook",
  "other",
]);

/** The payload fields a message must carry; the rest of the payload is stored as given. */
const REQUIRED_FIELDS = ["principal", "audience", "content_digest", "consent_basis"] as const;

const MESSAGE_ID = /^msg_[0-9a-f]{24}$/;

function failed(message: string, reason: string, details: Record<string, unknown> = {}) {
  return new RuntimeError("PROVIDER_FAILED", message, { reason, ...details });
}

/** The outbox message id a provider idempotency key names. */
export function outboxMessageId(providerKey: string): string {
  return `msg_${sha256Prefixed(`runx.outbox.message.v1\n${providerKey}`).slice(7, 31)}`;
}

function audienceRef(audience: Json | undefined): string {
  if (typeof audience === "string") return audience;
  if (isRecord(audience) && typeof audience.ref === "string") return audience.ref;
  return "";
}

function checkChannel(target: string): void {
  if (!OUTBOX_CHANNELS.has(target)) {
    throw failed(
      `the outbox has no channel ${JSON.stringify(target)} (use ${[...OUTBOX_CHANNELS].join(", ")})`,
      "unknown_channel",
      { path: "target" },
    );
  }
}

/** Creates `dir` below `root` one component at a time, refusing a symbolic link on the way. */
async function ensureDir(root: string, parts: readonly string[]): Promise<string> {
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    await mkdir(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw failed("cannot create the outbox", "outbox_create");
    });
    const info = await lstat(at);
    if (!info.isDirectory() || info.isSymbolicLink()) {
      throw new RuntimeError("PATH_ESCAPE", `outbox folder ${part} is not a plain directory`, {
        path: parts.join("/"),
      });
    }
  }
  return at;
}

async function readMessage(file: string): Promise<JsonRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw failed("cannot read the outbox message", "message_read");
  }
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value) && value.schema === OUTBOX_MESSAGE_SCHEMA) return value;
  } catch {
    // falls through to the refusal below
  }
  throw failed("an outbox message file is malformed", "message_shape");
}

/** What a send and a readback answer about one stored message. */
function answerOf(message: JsonRecord): JsonRecord {
  const channel = typeof message.channel === "string" ? message.channel : "";
  const id = typeof message.message_id === "string" ? message.message_id : "";
  return {
    message_id: message.message_id ?? null,
    operation_id: message.message_id ?? null,
    status: "queued",
    channel: message.channel ?? null,
    audience_ref: message.audience_ref ?? null,
    content_digest: message.content_digest ?? null,
    consent_basis: message.consent_basis ?? null,
    idempotency_key: message.idempotency_key ?? null,
    readback_ref: `outbox:${channel}/${id}`,
  };
}

/** Creates the outbox driver writing below `<workspaceRoot>/outbox`. */
export function createOutboxProvider(options: { workspaceRoot: string }): ProviderDriver {
  const fileOf = (channel: string, id: string) =>
    join(options.workspaceRoot, OUTBOX_DIRECTORY, channel, `${id}.json`);
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    name: "outbox",
    read(operation, target, input) {
      return serialized(async (): Promise<JsonRecord> => {
        if (operation !== "message.read") {
          throw failed(`the outbox cannot read ${operation} (use message.read)`, "operation");
        }
        checkChannel(target);
        const id = typeof input.message_id === "string" ? input.message_id : "";
        if (!MESSAGE_ID.test(id)) {
          throw failed("message.read needs the message_id a send returned", "message_id", {
            path: "input.message_id",
          });
        }
        const message = await readMessage(fileOf(target, id));
        return message === undefined
          ? { found: false, message_id: id, channel: target }
          : { found: true, ...answerOf(message) };
      });
    },
    mutate(operation, target, payload, providerKey) {
      return serialized(async () => {
        if (operation !== "message.send") {
          throw failed(`the outbox cannot apply ${operation} (use message.send)`, "operation");
        }
        checkChannel(target);
        for (const field of REQUIRED_FIELDS) {
          const value = payload[field];
          if (value === undefined || value === null || value === "") {
            throw failed(`message.send needs ${field}`, "message_field", {
              path: `input.${field}`,
            });
          }
        }
        const id = outboxMessageId(providerKey);
        const file = fileOf(target, id);
        const prior = await readMessage(file);
        if (prior !== undefined) {
          if (prior.idempotency_key !== providerKey) {
            throw failed(`outbox message ${id} belongs to another send`, "message_conflict");
          }
          return answerOf(prior);
        }
        await ensureDir(options.workspaceRoot, [OUTBOX_DIRECTORY, target]);
        const message: JsonRecord = {
          schema: OUTBOX_MESSAGE_SCHEMA,
          message_id: id,
          channel: target,
          audience_ref: audienceRef(payload.audience),
          content_digest: payload.content_digest ?? null,
          consent_basis: payload.consent_basis ?? null,
          idempotency_key: providerKey,
          payload,
        };
        await writeFileAtomic(file, `${JSON.stringify(message, null, 2)}\n`);
        return answerOf(message);
      });
    },
  };
}
