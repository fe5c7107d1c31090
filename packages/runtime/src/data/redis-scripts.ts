/**
 * The Lua half of the Redis event store (`redis.ts`): the append, read and heads scripts,
 * each run as one EVALSHA so that it sees and changes a stream in one step. The key layout
 * they are given is described in `redis.ts`.
 */
import { EMPTY_PROJECTION_DIGEST } from "./model.js";

// KEYS: stream list, idempotency hash, heads index zset, heads hash.
// ARGV: 1 expected, 2 idempotency key, 3 event digest, 4 record JSON, 5 previous digest the
// caller chained from, 6 next digest, 7 new index member, 8 aggregate id. The empty-stream
// digest P0 is a constant of the script (prepended below).
// The commit path is: read the head; when its version is the expected one and its digest the
// one the caller chained from, claim the idempotency key (HSETNX) and push the record, whose
// reply (the new length) proves the head's version equals the list length (on a mismatch both
// writes are undone before the script returns, so nothing is ever observed); then swap the
// index member (only when the commit millisecond changed it) and write the head. Every other
// outcome reads the length and the idempotency entry first: same digest replays, another
// digest conflicts, then the version, then the chain value.
const APPEND_BODY = `
local cur = EMPTY
local version = 0
local old = false
local head = redis.call('HGET', KEYS[4], ARGV[8])
if head then
  local a = string.find(head, '|', 1, true)
  local b = a and string.find(head, '|', a + 1, true)
  local c = b and string.find(head, '|{', b + 1, true)
  version = c and tonumber(string.sub(head, 1, a - 1))
  if not version then return redis.error_reply(INCONSISTENT) end
  cur = string.sub(head, a + 1, b - 1)
  old = string.sub(head, b + 1, c - 1)
end
if version == tonumber(ARGV[1]) and cur == ARGV[5] then
  local nextv = string.format('%d', version + 1)
  if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3] .. '|' .. nextv) == 1 then
    if redis.call('RPUSH', KEYS[1], ARGV[4]) ~= version + 1 then
      redis.call('RPOP', KEYS[1])
      redis.call('HDEL', KEYS[2], ARGV[2])
      if head then return redis.error_reply(INCONSISTENT) end
      return redis.error_reply(LEGACY)
    end
    if old ~= ARGV[7] then
      if old then redis.call('ZREM', KEYS[3], old) end
      redis.call('ZADD', KEYS[3], 0, ARGV[7])
    end
    redis.call('HSET', KEYS[4], ARGV[8], nextv .. '|' .. ARGV[6] .. '|' .. ARGV[7] .. '|' .. ARGV[4])
    return {'committed', version + 1, ARGV[6]}
  end
end
local len = redis.call('LLEN', KEYS[1])
if len ~= version then
  if head then return redis.error_reply(INCONSISTENT) end
  return redis.error_reply(LEGACY)
end
local existing = redis.call('HGET', KEYS[2], ARGV[2])
if existing then
  local sep = string.find(existing, '|', 1, true)
  if string.sub(existing, 1, sep - 1) == ARGV[3] then
    local at = tonumber(string.sub(existing, sep + 1))
    return {'replay', len, cur, redis.call('LINDEX', KEYS[1], at - 1)}
  end
  return {'idempotency_conflict', len, cur}
end
if len ~= tonumber(ARGV[1]) then return {'version_conflict', len, cur} end
return {'stale', len, cur}
`;

/** The append script (what the adapter runs by EVALSHA; the data bench runs it bare too). */
export const REDIS_APPEND_SCRIPT = `local EMPTY = '${EMPTY_PROJECTION_DIGEST}'
local INCONSISTENT = 'projection is inconsistent with the event stream'
local LEGACY = 'unsupported legacy projection; migrate it out of band'${APPEND_BODY}`;

// KEYS: stream list, heads hash. ARGV: 1 mode, 2 after version, 3 limit, 4 aggregate id.
// Returns the length, "<version>|<chain digest>" of the head ('' when none) and the records.
export const REDIS_READ_SCRIPT = `
local len = redis.call('LLEN', KEYS[1])
local head = redis.call('HGET', KEYS[2], ARGV[4])
if head then
  local a = string.find(head, '|', 1, true)
  local b = a and string.find(head, '|', a + 1, true)
  head = b and string.sub(head, 1, b - 1) or '?'
else
  head = ''
end
local items
if ARGV[1] == 'f' then
  local after = tonumber(ARGV[2])
  items = redis.call('LRANGE', KEYS[1], after, after + tonumber(ARGV[3]))
elseif ARGV[1] == 't' then
  local start = len - tonumber(ARGV[3])
  if start < 0 then start = 0 end
  items = redis.call('LRANGE', KEYS[1], start, -1)
else
  items = {}
  if len > 0 then items = {redis.call('LINDEX', KEYS[1], -1)} end
end
return {len, head, items}
`;

// KEYS: heads index, heads hash. The index and the hash change together inside the append
// script, so every member names its aggregate's current head; a member that does not (which
// only an out-of-band write could cause) is skipped.
export const REDIS_HEADS_SCRIPT = `
local min = '-'
if ARGV[1] ~= '' then min = '(' .. ARGV[1] end
local want = tonumber(ARGV[2])
local filter = #ARGV >= 3
local types = {}
for i = 3, #ARGV do types[ARGV[i]] = true end
local out = {}
while #out < want * 2 do
  local members = redis.call('ZRANGEBYLEX', KEYS[1], min, '+', 'LIMIT', 0, 100)
  if #members == 0 then break end
  for _, m in ipairs(members) do
    local sep = string.find(m, '|', 1, true)
    local agg = string.sub(m, sep + 1)
    local head = redis.call('HGET', KEYS[2], agg)
    local a = head and string.find(head, '|', 1, true)
    local b = a and string.find(head, '|', a + 1, true)
    local c = b and string.find(head, '|{', b + 1, true)
    if c and string.sub(head, b + 1, c - 1) == m then
      local rec = string.sub(head, c + 1)
      if (not filter) or types[cjson.decode(rec).event_type] then
        out[#out + 1] = agg
        out[#out + 1] = rec
        if #out >= want * 2 then break end
      end
    end
  end
  if #out >= want * 2 then break end
  min = '(' .. members[#members]
end
return out
`;
