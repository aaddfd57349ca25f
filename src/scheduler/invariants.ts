import type { RadixNode } from "./radix-cache.js";
import type { Scheduler } from "./scheduler.js";

/**
 * Recounts a scheduler's pool from scratch and throws if any slot is leaked or double-counted, a lock is wrong or
 * a running total drifted (SGLang's `self_check_during_idle`). O(requests + cache nodes): for idle time and
 * tests, kept out of the scheduler itself.
 *
 * @example
 * ```ts
 * const batch = scheduler.nextBatch(now);
 * if (batch.kind === "idle") checkSchedulerInvariants(scheduler);
 * ```
 */
export function checkSchedulerInvariants(scheduler: Scheduler): void {
  const s = scheduler.internals();
  const P = s.pageSize;
  const fail = (what: string) => {
    throw new Error(`scheduler invariant violated: ${what}`);
  };
  let ownedPages = 0;
  const expectedLocks = new Map<RadixNode, number>();
  let waitingSeen = 0;
  let runningSeen = 0;
  for (const r of s.live.values()) {
    if (r.status === "waiting") {
      waitingSeen++;
      if (r.kvLength !== 0 || r.node !== null) fail(`waiting request ${r.id} holds KV`);
      continue;
    }
    if (r.status !== "running") fail(`ended request ${r.id} is still live`);
    runningSeen++;
    if (r.cachedLength % P !== 0 || r.cachedLength > r.kvLength) fail(`request ${r.id} cached length`);
    if (r.kvLength > r.fillLength) fail(`request ${r.id} holds KV beyond its tokens`);
    ownedPages += Math.ceil((r.kvLength - r.cachedLength) / P);
    for (let n = r.node; n !== null; n = n.parent) expectedLocks.set(n, (expectedLocks.get(n) ?? 0) + 1);
  }
  if (waitingSeen !== s.waiting.length) fail("waiting queue and live requests disagree");
  for (const r of s.running) if (r.status !== "running" || s.live.get(r.id) !== r) fail(`running ${r.id}`);
  if (runningSeen < s.running.length) fail("running list has extra requests");
  let cachePages = 0;
  if (s.cache !== null) {
    let total = 0;
    let evictable = 0;
    for (const n of s.cache.nodes()) {
      if (n.key.length === 0 || n.key.length % P !== 0) fail("a cache node is not whole pages");
      total += n.key.length;
      if (n.lockRef !== (expectedLocks.get(n) ?? 0)) fail(`lock count ${n.lockRef} != ${expectedLocks.get(n) ?? 0}`);
      if (n.lockRef === 0) evictable += n.key.length;
    }
    if (total !== s.cache.totalTokens) fail(`cache total ${s.cache.totalTokens} != ${total}`);
    if (evictable !== s.cache.evictableTokens) fail(`cache evictable ${s.cache.evictableTokens} != ${evictable}`);
    cachePages = total / P;
  }
  if (s.pool.freePages + ownedPages + cachePages !== s.pool.totalPages) {
    fail(`slots: free ${s.pool.freePages} + owned ${ownedPages} + cached ${cachePages} != ${s.pool.totalPages}`);
  }
  let scaled = 0;
  let fixed = 0;
  for (const r of s.running) {
    if (r.reserved !== r.remainingClipped(s.clip)) fail(`request ${r.id} reservation`);
    if (r.ignoreEos) fixed += r.reserved;
    else scaled += r.reserved;
  }
  if (scaled !== s.reserveScaled || fixed !== s.reserveFixed) fail("reservation sums drifted");
  // Every running request holds KV for all its tokens but the last sampled one, plus this step's slot while a
  // decode step is in flight.
  for (const r of s.running) {
    const expected = s.deciding?.has(r) ? r.fillLength : r.fillLength - 1;
    if (r.kvLength !== expected) fail(`running request ${r.id} holds ${r.kvLength} slots, expected ${expected}`);
  }
  let waitingTokens = 0;
  for (const r of s.waiting) waitingTokens += r.fillLength;
  if (waitingTokens !== s.waitingTokens) fail("waiting token sum drifted");
}
