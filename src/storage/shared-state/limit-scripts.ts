/**
 * The Lua scripts of the Redis limit counters (see limit-counters.ts for the state they keep and
 * in-process-limit-counters.ts for the same steps in TypeScript). Each runs atomically on Redis,
 * so one script is one step that every instance sees whole or not at all.
 *
 * Money travels as decimal strings and is changed with HINCRBY only: Lua numbers are doubles and
 * print large integers in exponent form, so no amount is ever stored or formatted in Lua. Amounts
 * are only compared there, and headroom (a difference) is returned as a Redis integer, never as
 * text: both exact below 2^53. The clock is Redis TIME: one clock for every instance.
 *
 * Counter hashes have the fields `v` (the value), `at` (when it was seeded), and while being
 * seeded `seeding` (the seeder's token) plus `p:<request id>` (costs settled during the seed).
 */
import type { LuaScript } from "./redis-script-runner.js";

const HELPERS = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function release(reserved, field, amount)
  if amount == '0' then return end
  if redis.call('HINCRBY', reserved, field, '-' .. amount) <= 0 then redis.call('HDEL', reserved, field) end
end
local function split_lease(lease)
  local sep = string.find(lease, '|', 1, true)
  return string.sub(lease, 1, sep - 1), string.sub(lease, sep + 1)
end
`;

/**
 * KEYS: rate, leases, deadlines, reserved, stale, balance, daily, monthly, total, epoch.
 * ARGV: request id, key id, amount, rpm (0 = none), rate window ms, day start, day end, month start,
 * month end, daily limit, monthly limit, total limit ('' = none), check balance (1/0), lease ttl ms,
 * seed marker ttl ms, spend max age ms, balance max age ms, total idle ttl ms, the caller's epoch.
 * With an admission record (AdmissionRecord in limits/limit-counters.ts): KEYS go on with its key
 * and its indexes, ARGV with its value before and after the admission time, its ttl ms and its
 * member; admitted, it is stored too and the reply's third element is 1 (else 0). Admitted with a
 * spend limit, the reply goes on with what the daily, monthly and total limits and the balance
 * leave after this amount (Headroom in limits/limit-counters.ts; false where not checked): Lua
 * numbers, exact below 2^53 like the comparisons, and sent as Redis integers.
 */
export const RESERVE_SCRIPT: LuaScript = {
  name: "limits-reserve",
  // Admissions of one turn run as one script call (batched-script.ts).
  batchable: true,
  source: `${HELPERS}
local now = now_ms()
if now < tonumber(ARGV[6]) or now >= tonumber(ARGV[7]) or now < tonumber(ARGV[8]) or now >= tonumber(ARGV[9]) then
  return {'clock', now}
end
local request_id, key_id, amount = ARGV[1], ARGV[2], ARGV[3]

-- A caller whose reservations are not published in this epoch (Redis lost its memory, or the caller
-- is new) adopts it first; while a new epoch recovers, nothing is admitted against a limit.
local epoch = redis.call('HMGET', KEYS[10], 'id', 'until')
if epoch[1] ~= ARGV[19] then return {'epoch'} end
local recovering = now < tonumber(epoch[2])
local enforces = ARGV[10] ~= '' or ARGV[11] ~= '' or ARGV[12] ~= '' or ARGV[13] == '1'
if recovering and enforces then return {'recovering', tonumber(epoch[2]) - now} end

-- Leases past their deadline belong to an instance that crashed or lost Redis: release them, and
-- mark the counters they may have missed for re-seeding from Postgres.
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)
for _, lease_id in ipairs(due) do
  local lease = redis.call('HGET', KEYS[2], lease_id)
  if lease then
    local lease_key, lease_amount = split_lease(lease)
    release(KEYS[4], lease_key, lease_amount)
    release(KEYS[4], '*', lease_amount)
    redis.call('HDEL', KEYS[2], lease_id)
    redis.call('SADD', KEYS[5], lease_key, '*')
    redis.call('PEXPIRE', KEYS[5], 86400000)
  end
  redis.call('ZREM', KEYS[3], lease_id)
end
if redis.call('SISMEMBER', KEYS[5], key_id) == 1 then
  redis.call('DEL', KEYS[7], KEYS[8], KEYS[9])
  redis.call('SREM', KEYS[5], key_id)
end
if redis.call('SISMEMBER', KEYS[5], '*') == 1 then
  redis.call('DEL', KEYS[6])
  redis.call('SREM', KEYS[5], '*')
end

-- Rate limit: a sliding window of admission times.
local rpm = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  if redis.call('ZCARD', KEYS[1]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {'rate', tonumber(oldest[2]) + window - now}
  end
end

-- Counters: every one this request needs must be seeded and young enough. While any counter of
-- this key or workspace is being seeded, nobody is admitted (that keeps the seed exact).
local names = {'daily', 'monthly', 'total', 'balance'}
local counters = {KEYS[7], KEYS[8], KEYS[9], KEYS[6]}
local limits = {ARGV[10], ARGV[11], ARGV[12]}
local wanted = {limits[1] ~= '', limits[2] ~= '', limits[3] ~= '', true}
local max_age = {tonumber(ARGV[16]), tonumber(ARGV[16]), tonumber(ARGV[16]), tonumber(ARGV[17])}
local states = {}
for i = 1, 4 do
  states[i] = redis.call('HMGET', counters[i], 'v', 'at', 'seeding')
  if states[i][3] then return {'wait'} end
end
local missing = {}
for i = 1, 4 do
  -- Nothing is seeded while leases of the lost memory may still be on their way back.
  if recovering and wanted[i] and (not states[i][1] or now - tonumber(states[i][2]) >= max_age[i]) then
    return {'recovering', tonumber(epoch[2]) - now}
  end
end
for i = 1, 4 do
  if wanted[i] and (not states[i][1] or now - tonumber(states[i][2]) >= max_age[i]) then
    redis.call('DEL', counters[i])
    redis.call('HSET', counters[i], 'seeding', request_id)
    redis.call('PEXPIRE', counters[i], ARGV[15])
    table.insert(missing, names[i])
  end
end
if #missing > 0 then
  return {'seed', now, request_id, missing, redis.call('HGETALL', KEYS[2])}
end

-- Headroom: a limit minus the window's settled spend minus this key's reservations; the balance
-- minus the workspace's reservations. The tightest failing check is reported.
local need = tonumber(amount)
local reserved_key = tonumber(redis.call('HGET', KEYS[4], key_id) or '0')
local fail_name, fail_headroom = nil, nil
-- What each check leaves after this amount (false: not checked), returned when admitted.
local left = {false, false, false, false}
for i = 1, 3 do
  if wanted[i] then
    local headroom = tonumber(limits[i]) - tonumber(states[i][1]) - reserved_key
    left[i] = headroom - need
    if headroom < need and (fail_headroom == nil or headroom < fail_headroom) then
      fail_name, fail_headroom = names[i], headroom
    end
  end
end
if ARGV[13] == '1' then
  local headroom = tonumber(states[4][1]) - tonumber(redis.call('HGET', KEYS[4], '*') or '0')
  left[4] = headroom - need
  if headroom < need and (fail_headroom == nil or headroom < fail_headroom) then
    fail_name, fail_headroom = 'balance', headroom
  end
end
if fail_name then return {'limit', fail_name, fail_headroom} end

-- Admitted: count it in the rate window and hold the reservation under a lease.
if rpm > 0 then
  redis.call('ZADD', KEYS[1], now, request_id)
  redis.call('PEXPIRE', KEYS[1], window)
end
redis.call('HSET', KEYS[2], request_id, key_id .. '|' .. amount)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[14]), request_id)
if amount ~= '0' then
  redis.call('HINCRBY', KEYS[4], key_id, amount)
  redis.call('HINCRBY', KEYS[4], '*', amount)
end
if wanted[3] then redis.call('PEXPIRE', KEYS[9], ARGV[18]) end
local stored = 0
if ARGV[20] then
  local at = string.format('%d', now)
  redis.call('SET', KEYS[11], ARGV[20] .. at .. ARGV[21], 'PX', ARGV[22])
  for i = 12, #KEYS do redis.call('ZADD', KEYS[i], now, ARGV[23]) end
  stored = 1
end
if wanted[1] or wanted[2] or wanted[3] then
  return {'ok', now, stored, left[1], left[2], left[3], left[4]}
end
return {'ok', now, stored}
`,
};

/**
 * KEYS: leases, balance, daily, monthly, total.
 * ARGV: token, day expire-at ms, month expire-at ms, total idle ttl ms, balance ttl ms, then per
 * counter: name, base, n, and n pairs (request id, cost Postgres' snapshot counts for it, or 0).
 */
export const FINISH_SEED_SCRIPT: LuaScript = {
  name: "limits-finish-seed",
  source: `${HELPERS}
local now = now_ms()
local key_of = {balance = KEYS[2], daily = KEYS[3], monthly = KEYS[4], total = KEYS[5]}
local all_set = 1
local pos = 6
while pos <= #ARGV do
  local name, base, count = ARGV[pos], ARGV[pos + 1], tonumber(ARGV[pos + 2])
  local key = key_of[name]
  local first = pos + 3
  pos = first + 2 * count
  if redis.call('HGET', key, 'seeding') == ARGV[1] then
    local pending = {}
    local fields = redis.call('HGETALL', key)
    for i = 1, #fields, 2 do
      if string.sub(fields[i], 1, 2) == 'p:' then pending[string.sub(fields[i], 3)] = fields[i + 1] end
    end
    redis.call('DEL', key)
    redis.call('HSET', key, 'v', base, 'at', now)
    -- A cost raises a spend counter and lowers the balance.
    local is_balance = name == 'balance'
    for j = first, pos - 1, 2 do
      local lease_id, included = ARGV[j], ARGV[j + 1]
      if redis.call('HEXISTS', KEYS[1], lease_id) == 1 then
        if included ~= '0' then
          -- Postgres counts it and its settlement here is still to come: count it once.
          redis.call('HINCRBY', key, 'v', is_balance and included or ('-' .. included))
        end
      elseif pending[lease_id] and included == '0' then
        -- Settled here during the seed, after Postgres' snapshot was taken: count it once.
        redis.call('HINCRBY', key, 'v', is_balance and ('-' .. pending[lease_id]) or pending[lease_id])
      end
    end
    if name == 'daily' then redis.call('PEXPIREAT', key, ARGV[2])
    elseif name == 'monthly' then redis.call('PEXPIREAT', key, ARGV[3])
    elseif name == 'total' then redis.call('PEXPIRE', key, ARGV[4])
    else redis.call('PEXPIRE', key, ARGV[5]) end
  else
    all_set = 0
  end
end
return all_set
`,
};

/**
 * Settles one or more reservations (those of one event-loop turn leave as one call). KEYS, per
 * settlement: leases, deadlines, reserved, stale, balance, daily, monthly, total. ARGV, per
 * settlement: request id, key id, cost. Returns one element per settlement: 1 settled, 0 no lease.
 */
export const SETTLE_SCRIPT: LuaScript = {
  name: "limits-settle",
  source: `${HELPERS}
local function settle(k, request_id, key_id, cost)
  local lease = redis.call('HGET', KEYS[k + 1], request_id)
  if not lease then
    -- Expired (and released) or settled already: whether the cost is in the counters is unknown,
    -- so they are re-seeded from Postgres instead of guessed.
    if cost ~= '0' then
      redis.call('SADD', KEYS[k + 4], key_id, '*')
      redis.call('PEXPIRE', KEYS[k + 4], 86400000)
    end
    return 0
  end
  local lease_key, lease_amount = split_lease(lease)
  release(KEYS[k + 3], lease_key, lease_amount)
  release(KEYS[k + 3], '*', lease_amount)
  redis.call('HDEL', KEYS[k + 1], request_id)
  redis.call('ZREM', KEYS[k + 2], request_id)
  if cost ~= '0' then
    local function apply(key, delta)
      if redis.call('HEXISTS', key, 'seeding') == 1 then
        redis.call('HSET', key, 'p:' .. request_id, cost)
      elseif redis.call('HEXISTS', key, 'v') == 1 then
        redis.call('HINCRBY', key, 'v', delta)
      end
    end
    apply(KEYS[k + 5], '-' .. cost)
    apply(KEYS[k + 6], cost)
    apply(KEYS[k + 7], cost)
    apply(KEYS[k + 8], cost)
  end
  return 1
end
local settled = {}
for i = 0, #ARGV / 3 - 1 do
  settled[i + 1] = settle(i * 8, ARGV[i * 3 + 1], ARGV[i * 3 + 2], ARGV[i * 3 + 3])
end
return settled
`,
};

/**
 * KEYS: epoch. ARGV: the caller's epoch ('' = none), a new epoch id, recovery ms.
 * Returns {epoch id, recovery ms left}. An epoch created by a caller that knew an earlier one (the
 * memory was lost) recovers for the given time; a caller that knew an earlier one joining an epoch
 * younger than that (created meanwhile by a new instance) extends its recovery to that length.
 */
export const EPOCH_SCRIPT: LuaScript = {
  name: "limits-epoch",
  source: `${HELPERS}
local now = now_ms()
local recovery = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'id', 'created', 'until')
local id, created, recovers_until = state[1], tonumber(state[2]), tonumber(state[3])
if not id then
  id, created, recovers_until = ARGV[2], now, now
  if ARGV[1] ~= '' then recovers_until = now + recovery end
  redis.call('HSET', KEYS[1], 'id', id, 'created', created, 'until', recovers_until)
elseif ARGV[1] ~= '' and ARGV[1] ~= id and recovers_until < created + recovery then
  recovers_until = created + recovery
  redis.call('HSET', KEYS[1], 'until', recovers_until)
end
return {id, recovers_until - now}
`,
};

/**
 * KEYS: epoch, leases, deadlines, reserved. ARGV: epoch, lease ttl ms, then per lease: request id,
 * key id, amount. A lease already held is left as it is; 0 when the epoch is another one by now.
 */
export const REPUBLISH_SCRIPT: LuaScript = {
  name: "limits-republish",
  source: `${HELPERS}
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
local deadline = now_ms() + tonumber(ARGV[2])
for i = 3, #ARGV, 3 do
  local request_id, key_id, amount = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HSETNX', KEYS[2], request_id, key_id .. '|' .. amount) == 1 then
    redis.call('ZADD', KEYS[3], deadline, request_id)
    if amount ~= '0' then
      redis.call('HINCRBY', KEYS[4], key_id, amount)
      redis.call('HINCRBY', KEYS[4], '*', amount)
    end
  end
end
return 1
`,
};

/** KEYS: leases, deadlines. ARGV: request id, lease ttl ms. */
export const REFRESH_SCRIPT: LuaScript = {
  name: "limits-refresh",
  source: `${HELPERS}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 'XX', now_ms() + tonumber(ARGV[2]), ARGV[1])
return 1
`,
};

/** KEYS: reserved. ARGV: key id. */
export const READ_RESERVED_SCRIPT: LuaScript = {
  name: "limits-read-reserved",
  source: "return redis.call('HMGET', KEYS[1], ARGV[1], '*')",
};

/** KEYS: balance. */
export const FORGET_BALANCE_SCRIPT: LuaScript = {
  name: "limits-forget-balance",
  source: "return redis.call('DEL', KEYS[1])",
};

export const TIME_SCRIPT: LuaScript = {
  name: "limits-time",
  source: "return redis.call('TIME')",
};
