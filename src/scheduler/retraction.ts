/**
 * Retraction (SGLang's `retract_decode`): before a decode step every running request needs one more slot
 * (a new page at a page boundary). When the pool, after evicting the prefix cache, is short, requests are
 * taken out of the batch until it fits: fewest output tokens first (least work lost), and among equals the
 * longest prompt first (frees the most). At least one goes; one always stays; if the last one still does not
 * fit it is aborted rather than retried forever.
 */
import type { Req } from "./request.js";

/**
 * Victim order: first element is retracted first. Ties beyond (output, prompt) take the later request in the
 * batch first, as SGLang's stable sort followed by `pop()` does.
 *
 * @example
 * ```ts
 * retractionOrder(running)[0]; // the request with the fewest output tokens (longest prompt among equals)
 * ```
 */
export function retractionOrder(running: readonly Req[]): Req[] {
  const indexed = running.map((req, index) => ({ req, index }));
  indexed.sort(
    (a, b) =>
      a.req.outputTokenIds.length - b.req.outputTokenIds.length ||
      b.req.promptTokenIds.length - a.req.promptTokenIds.length ||
      b.index - a.index,
  );
  return indexed.map((x) => x.req);
}

/**
 * What retraction needs from the scheduler.
 *
 * @example
 * ```ts
 * const ctx: RetractionContext = { pageSize: 1, fits: (pages) => makeRoom(pages), release: (r) => freeKv(r) };
 * ```
 */
export interface RetractionContext {
  pageSize: number;
  /** Evict from the prefix cache as needed; true when `pages` free pages are then available. */
  fits(pages: number): boolean;
  /** Free a request's KV (its locked prefix becomes evictable again). */
  release(r: Req): void;
}

/**
 * Pages the next decode step needs for these requests.
 *
 * @example
 * ```ts
 * decodePagesNeeded(running, 1); // running.length
 * ```
 */
export function decodePagesNeeded(reqs: readonly Req[], pageSize: number): number {
  if (pageSize === 1) return reqs.length;
  let n = 0;
  for (const r of reqs) if (r.kvLength % pageSize === 0) n++;
  return n;
}

/**
 * Outcome of {@link retract}.
 *
 * @example
 * ```ts
 * const { retracted, aborted, remaining } = retract(ctx, running);
 * ```
 */
export interface RetractionOutcome {
  /** In retraction order; their KV is released. */
  retracted: Req[];
  /** The last request when even alone it did not fit (KV released), else null. */
  aborted: Req | null;
  /** Requests that stay, in batch order. */
  remaining: Req[];
}

/**
 * Retract until the decode step fits (call it only when it does not fit as is).
 *
 * @example
 * ```ts
 * if (!fits(decodePagesNeeded(running, P))) ({ remaining: running } = retract(ctx, running));
 * ```
 */
export function retract(ctx: RetractionContext, running: readonly Req[]): RetractionOutcome {
  const order = retractionOrder(running);
  const gone = new Set<Req>();
  const retracted: Req[] = [];
  let aborted: Req | null = null;
  let need = decodePagesNeeded(running, ctx.pageSize);
  let left = running.length;
  let next = 0;
  let first = true;
  while (first || !ctx.fits(need)) {
    if (left === 1) {
      aborted = order[next] as Req;
      gone.add(aborted);
      ctx.release(aborted);
      break;
    }
    first = false;
    const victim = order[next++] as Req;
    if (ctx.pageSize === 1 || victim.kvLength % ctx.pageSize === 0) need--;
    gone.add(victim);
    left--;
    ctx.release(victim);
    retracted.push(victim);
  }
  return { retracted, aborted, remaining: running.filter((r) => !gone.has(r)) };
}
