/**
 * One admission round (SGLang's PrefillAdder): which waiting requests join the next prefill batch.
 * Every admitted request must fit what remains of the token budget after the running requests' forecast:
 *   remTotal = free + evictable - sum over running of min(maxNew - out, CLIP) * ratio   (ratio 1 for ignore_eos)
 * A candidate needs `extend + min(max(maxNew - out, 0), CLIP) < remTotal` (strictly less), then is charged
 * `extend + min(maxNew, CLIP)`. The round stops at the first candidate that does not fit (no skipping), at
 * max running requests, or when the prefill token budget is spent.
 */
import { ceilToPage, floorToPage } from "./pool.js";
import type { PrefixMatch, RadixNode } from "./radix-cache.js";
import type { Req } from "./request.js";

/**
 * What a round needs from the scheduler (kept narrow so the round can be reasoned about alone).
 *
 * @example
 * ```ts
 * const ctx: AdmissionContext = { available: () => free + evictable, runningReserve: 0, runningCount: 0, ... };
 * ```
 */
export interface AdmissionContext {
  /** free + evictable token slots right now (locking a cached prefix lowers it). */
  available(): number;
  /** Sum over running requests of clipped remaining max_new_tokens times their ratio. */
  runningReserve: number;
  runningCount: number;
  maxRunningRequests: number;
  maxPrefillTokens: number;
  /** -1: chunked prefill off. */
  chunkedPrefillSize: number;
  pageSize: number;
  clip: number;
  /** Longest cached prefix of the request's prompt + output (capped at length - 1); length 0 when disabled. */
  match(r: Req): PrefixMatch | null;
  lock(node: RadixNode): void;
  unlock(node: RadixNode): void;
}

/**
 * One request's place in the prefill batch a round produced.
 *
 * @example
 * ```ts
 * for (const a of round.admitted) allocate(a.req, a.extend);
 * ```
 */
export interface Admission {
  req: Req;
  /** Tokens to compute this step (not page-rounded). */
  extend: number;
  /** Tokens reused from the cache (new admissions only). */
  cachedTokens: number;
  /** Locked prefix node for a new admission (null for a continuing chunk or with the cache off). */
  node: RadixNode | null;
  /** Whether this step finishes the request's prefill. */
  lastChunk: boolean;
}

/**
 * A round's outcome.
 *
 * @example
 * ```ts
 * const round = admitRound(ctx, chunked, waiting);
 * waiting.splice(0, round.admittedFromQueue);
 * ```
 */
export interface AdmissionRound {
  admitted: Admission[];
  /** How many requests from the front of `waiting` were admitted. */
  admittedFromQueue: number;
  /** `#new-token`: page-rounded tokens charged for computing. */
  newTokens: number;
  /** `#cached-token`. */
  cachedTokens: number;
}

/**
 * Run one round. `chunked` is a request whose chunked prefill is under way (it goes first, unchecked, as in
 * SGLang: its budget was checked when it was first admitted). Locks the cached prefix of each new admission.
 *
 * @example
 * ```ts
 * const round = admitRound(ctx, null, waiting); // round.admitted: the next prefill batch
 * ```
 */
export function admitRound(ctx: AdmissionContext, chunked: Req | null, waiting: readonly Req[]): AdmissionRound {
  const P = ctx.pageSize;
  const chunking = ctx.chunkedPrefillSize > 0;
  let offset = ctx.runningReserve;
  let remPrefill = ctx.maxPrefillTokens;
  let remChunk = chunking ? ctx.chunkedPrefillSize : Number.POSITIVE_INFINITY;
  const round: AdmissionRound = { admitted: [], admittedFromQueue: 0, newTokens: 0, cachedTokens: 0 };
  const charge = (computeTokens: number, reserveTokens: number, cached: number) => {
    offset += computeTokens + reserveTokens;
    remPrefill -= computeTokens;
    remChunk -= computeTokens;
    round.newTokens += computeTokens;
    round.cachedTokens += cached;
  };

  if (chunked !== null) {
    const remaining = chunked.fillLength - chunked.kvLength;
    if (ceilToPage(remaining, P) > remChunk) {
      const extend = floorToPage(remChunk, P);
      round.admitted.push({ req: chunked, extend, cachedTokens: 0, node: null, lastChunk: false });
      charge(extend, 0, 0);
      return round; // the chunk took the whole chunk budget
    }
    round.admitted.push({ req: chunked, extend: remaining, cachedTokens: 0, node: null, lastChunk: true });
    charge(ceilToPage(remaining, P), Math.min(chunked.maxNewTokens, ctx.clip), 0);
  }

  for (const req of waiting) {
    if (ctx.runningCount + round.admitted.length >= ctx.maxRunningRequests) break;
    const m = ctx.match(req);
    const cached = m === null ? 0 : m.length;
    const extend = req.fillLength - cached;
    const extendPaged = ceilToPage(extend, P);
    const total = extendPaged + req.remainingClipped(ctx.clip);
    if (total >= ctx.available() - offset) break; // no token budget: needs strictly less than what remains
    // SGLang's PrefillAdder stops at `input_tokens >= rem_input_tokens`: a request that would take exactly what is
    // left of max_prefill_tokens waits too (the spec's `>` let it in; every SGLang release we read has `>=`).
    if (extendPaged >= remPrefill && round.admitted.length > 0) break;
    const node = m === null ? null : m.node;
    if (node !== null) ctx.lock(node);
    // Locking made the prefix unevictable, so what remains may have shrunk (SGLang re-checks too).
    if (total >= ctx.available() - offset) {
      if (node !== null) ctx.unlock(node);
      break;
    }
    if (extendPaged > remChunk) {
      const first = floorToPage(remChunk, P);
      if (first <= 0) {
        if (node !== null) ctx.unlock(node);
        break;
      }
      round.admitted.push({ req, extend: first, cachedTokens: cached, node, lastChunk: false });
      round.admittedFromQueue++;
      charge(first, 0, cached);
      break; // its chunk took the rest of the chunk budget
    }
    round.admitted.push({ req, extend, cachedTokens: cached, node, lastChunk: true });
    round.admittedFromQueue++;
    charge(extendPaged, Math.min(req.maxNewTokens, ctx.clip), cached);
  }
  return round;
}
