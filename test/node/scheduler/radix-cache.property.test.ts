import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ceilToPage, floorToPage, PagePool } from "../../../src/scheduler/pool.js";
import { RadixCache, type RadixNode } from "../../../src/scheduler/radix-cache.js";
import { propertyRuns } from "../../support/property-runs";

/**
 * The prefix cache and the KV pool, held against models written from their documentation (the JSDoc of
 * src/scheduler/radix-cache.ts and pool.ts, the spec's "The pool", and how scheduler.ts drives them):
 *
 * - the radix cache (RadixCache) against a flat map of cached pages, each keyed by the whole prefix it ends,
 *   with a lock count, a last-access tick and whether a tree node ends there (SGLang's node granularity: an
 *   insert's end, a match's end, or a branch point):
 *   - `match(tokens, max)` returns the longest cached prefix of `tokens[0, max)` in whole pages (pages 1, 4, 16;
 *     `max` capped at the length minus one as the scheduler does, or beyond the length, or negative), and its
 *     node spells exactly that prefix; it touches that path for LRU, and, as SGLang does (it touches an edge
 *     before splitting it), the unmatched rest of an edge the match ends inside;
 *   - `insert(tokens, length)` returns how many of those whole pages were already cached and the node that ends
 *     `length`; afterwards all of them are cached; it touches the path like a match, and a new leaf is newer
 *     still (two leaves never share an access time);
 *   - `lock`/`unlock` count every lock on the path: a page's lock count is the number of held locks whose prefix
 *     covers it, and the root holds its sentinel lock plus one per held lock;
 *   - `evict(n)` frees unlocked leaves (whole nodes), least recently used first, until `n` tokens are freed or
 *     nothing is left (n <= 0 frees nothing; exactly the evictable count, or more, frees all of it), returns what
 *     it freed, never touches a locked page, and never frees a page used more recently than one it leaves
 *     evictable (but for the pages above it, which go only after it); a second property builds many leaves at once so that one eviction pops several of them;
 *   - `totalTokens` and `evictableTokens` always equal the model's counts; once every lock is released
 *     everything is evictable and evicting it all leaves an empty tree (evicted prefixes can be inserted again);
 * - the two together as the scheduler drives them (admit = match capped at length - 1 + lock + allocate the
 *   rest, making room by eviction first; decode = one more token, a new page at a page boundary; checkpoint =
 *   cacheUnfinished: insert whole pages, free the duplicates, move the lock; finish = checkpoint + release;
 *   retract = release): free + owned by requests + cached = total pages after every step, free never negative
 *   nor above the total, the pool never overdrawn, and nothing leaks once every request is released;
 * - the pool (PagePool) against a counter: whole pages of `maxTotalTokens`, `allocate` refuses more than is free
 *   and `release` more than was taken (both leave the pool unchanged), and `ceilToPage`/`floorToPage` round to
 *   the nearest whole page up/down;
 * - what these properties found, as examples: SGLang's touch of a split edge, a second unlock of the root, and
 *   page counts that are not whole numbers.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };

// ---- the model: cached pages in a flat map ------------------------------------------------------------------

/** One cached page as the model (or the tree, read back) sees it. */
interface PageView {
  /** Tick of the last match or insert that covered it. */
  last: number;
  /** Held locks whose prefix covers it. */
  locks: number;
  /** A tree node ends with this page. */
  end: boolean;
}

interface ModelPage extends PageView {
  /** The whole prefix this page ends. */
  prefix: number[];
}

const keyOf = (tokens: readonly number[], length: number): string => tokens.slice(0, length).join(",");

class CacheModel {
  readonly pages = new Map<string, ModelPage>();
  /** Every page prefix that was evicted at some point (to see re-inserts happen). */
  readonly everEvicted = new Set<string>();
  private tick = 0;

  constructor(readonly P: number) {}

  get totalTokens(): number {
    return this.pages.size * this.P;
  }

  get evictableTokens(): number {
    let n = 0;
    for (const p of this.pages.values()) if (p.locks === 0) n += this.P;
    return n;
  }

  private page(tokens: readonly number[], length: number): ModelPage {
    const p = this.pages.get(keyOf(tokens, length));
    if (p === undefined) throw new Error(`model: page ${keyOf(tokens, length)} is not cached`);
    return p;
  }

  /** Longest cached whole-page prefix of `tokens[0, end)`. */
  cachedPrefix(tokens: readonly number[], end: number): number {
    let length = 0;
    while (length + this.P <= end && this.pages.has(keyOf(tokens, length + this.P))) length += this.P;
    return length;
  }

  private touch(tokens: readonly number[], length: number, tick: number): void {
    for (let l = this.P; l <= length; l += this.P) this.page(tokens, l).last = tick;
    if (length > 0) this.page(tokens, length).end = true;
  }

  /**
   * SGLang touches a whole edge before it splits it: when a match or insert stops inside an edge (the page at
   * `length` ends no node), the rest of that edge, down to the next node's end, is touched too.
   */
  private touchRestOfEdge(tokens: readonly number[], length: number, tick: number): void {
    if (length === 0) return;
    let at = this.pages.get(keyOf(tokens, length));
    while (at !== undefined && !at.end) {
      const here = at;
      // Inside an edge a page has exactly one cached continuation.
      at = [...this.pages.values()].find(
        (p) =>
          p.prefix.length === here.prefix.length + this.P &&
          keyOf(p.prefix, here.prefix.length) === keyOf(here.prefix, here.prefix.length),
      );
      if (at !== undefined) at.last = tick;
    }
  }

  match(tokens: readonly number[], maxLength: number): number {
    const end = Math.floor(Math.min(maxLength, tokens.length) / this.P) * this.P;
    const tick = ++this.tick;
    const length = this.cachedPrefix(tokens, end);
    this.touchRestOfEdge(tokens, length, tick);
    this.touch(tokens, length, tick);
    return length;
  }

  insert(tokens: readonly number[], length: number): number {
    const tick = ++this.tick;
    const existing = this.cachedPrefix(tokens, length);
    this.touchRestOfEdge(tokens, existing, tick);
    this.touch(tokens, existing, tick); // a branch point (or the end of what was there)
    if (existing < length) {
      // The new leaf is newer than the path (the cache's clock ticks again for it).
      const leafTick = ++this.tick;
      for (let l = existing + this.P; l <= length; l += this.P)
        this.pages.set(keyOf(tokens, l), { prefix: tokens.slice(0, l), last: leafTick, locks: 0, end: false });
      this.page(tokens, length).end = true;
    }
    return existing;
  }

  lock(tokens: readonly number[], length: number, delta: 1 | -1): void {
    for (let l = this.P; l <= length; l += this.P) this.page(tokens, l).locks += delta;
  }

  /** Unlocked leaf nodes, least recently used first, whole nodes at a time. Returns freed tokens. */
  evict(tokens: number): { freed: number; evicted: Set<string> } {
    const evicted = new Set<string>();
    let freed = 0;
    if (tokens <= 0) return { freed, evicted };
    while (freed < tokens) {
      const parents = new Set<string>();
      for (const p of this.pages.values()) parents.add(keyOf(p.prefix, p.prefix.length - this.P));
      let lru: ModelPage | undefined;
      for (const [key, p] of this.pages) {
        if (p.locks > 0 || parents.has(key)) continue;
        if (!p.end) throw new Error(`model: leaf page ${key} ends no node`);
        // Every tick touches one root path, so two leaves never share one: the LRU order has no ties.
        if (lru !== undefined && p.last === lru.last) throw new Error("model: two leaves with one access tick");
        if (lru === undefined || p.last < lru.last) lru = p;
      }
      if (lru === undefined) break;
      let l = lru.prefix.length;
      do {
        const key = keyOf(lru.prefix, l);
        this.pages.delete(key);
        evicted.add(key);
        this.everEvicted.add(key);
        freed += this.P;
        l -= this.P;
      } while (l > 0 && !this.page(lru.prefix, l).end);
    }
    return { freed, evicted };
  }

  view(): Map<string, PageView> {
    const out = new Map<string, PageView>();
    for (const [key, p] of this.pages) out.set(key, { last: p.last, locks: p.locks, end: p.end });
    return out;
  }
}

// ---- reading the tree back ----------------------------------------------------------------------------------

/** The tree as one entry per cached page (checking its shape on the way: parent links, whole-page edges). */
function readTree(cache: RadixCache): Map<string, PageView> {
  const P = cache.pageSize;
  const out = new Map<string, PageView>();
  const walk = (node: RadixNode, prefix: number[]) => {
    for (const child of node.children.values()) {
      expect(child.parent).toBe(node);
      expect(child.key.length).toBeGreaterThan(0);
      expect(child.key.length % P).toBe(0);
      if (node !== cache.root) expect(child.lockRef).toBeLessThanOrEqual(node.lockRef);
      const path = prefix.concat(child.key);
      for (let l = prefix.length + P; l <= path.length; l += P) {
        out.set(keyOf(path, l), { last: child.lastAccess, locks: child.lockRef, end: l === path.length });
      }
      walk(child, path);
    }
  };
  walk(cache.root, []);
  return out;
}

/** Sorted entries with access ticks replaced by their rank (only the LRU order is documented, not the clock). */
function normalized(pages: Map<string, PageView>): [string, PageView][] {
  const ticks = [...new Set([...pages.values()].map((p) => p.last))].sort((a, b) => a - b);
  const rank = new Map(ticks.map((t, i) => [t, i]));
  return [...pages.entries()]
    .map(([k, p]): [string, PageView] => [k, { ...p, last: rank.get(p.last) as number }])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The tokens a node spells from the root, or null when it is no longer in the tree. */
function spelled(cache: RadixCache, node: RadixNode): number[] | null {
  const parts: number[][] = [];
  let n: RadixNode = node;
  while (n.parent !== null) {
    parts.unshift(n.key);
    n = n.parent;
  }
  return n === cache.root ? parts.flat() : null;
}

function expectSameCache(cache: RadixCache, model: CacheModel, heldLocks: number): void {
  expect(normalized(readTree(cache))).toEqual(normalized(model.view()));
  expect(cache.totalTokens).toBe(model.totalTokens);
  expect(cache.evictableTokens).toBe(model.evictableTokens);
  expect(cache.root.lockRef).toBe(1 + heldLocks);
}

/** Evict on both and hold the documented promises that do not depend on the model's node boundaries. */
function evictBoth(cache: RadixCache, model: CacheModel, tokens: number): { freed: number; evicted: Set<string> } {
  const before = readTree(cache);
  const evictableBefore = cache.evictableTokens;
  const freed = cache.evict(tokens);
  const want = model.evict(tokens);
  expect(freed).toBe(want.freed);
  const after = readTree(cache);
  // Never more than is evictable; all of it when asked for at least that much; nothing for n <= 0.
  expect(freed).toBeLessThanOrEqual(evictableBefore);
  expect(freed).toBeGreaterThanOrEqual(Math.max(0, Math.min(tokens, evictableBefore)));
  if (tokens >= evictableBefore) expect(cache.evictableTokens).toBe(0);
  if (tokens <= 0) expect(freed).toBe(0);
  // Locked pages stay; what went was unlocked and no more recent than anything evictable left behind, but for the
  // pages above it (a new leaf is newer than its path, and a path goes only after its leaves).
  const gone: Array<[string, number]> = [];
  for (const [key, p] of before) {
    if (after.has(key)) continue;
    expect(p.locks, `evicted locked page ${key}`).toBe(0);
    gone.push([key, p.last]);
  }
  for (const [key, p] of after) {
    if (p.locks > 0) continue;
    for (const [goneKey, goneLast] of gone)
      if (!goneKey.startsWith(`${key},`))
        expect(p.last, `kept ${key} though older than evicted ${goneKey}`).toBeGreaterThanOrEqual(goneLast);
  }
  expect(before.size - after.size).toBe(freed / cache.pageSize);
  return want;
}

// ---- generators ---------------------------------------------------------------------------------------------

const tokenArb = fc.integer({ min: 0, max: 2 });

/** Sequences sharing stems (so prefixes are shared, often in partial pages); index 0 is the empty sequence. */
function sequencesArb(P: number): fc.Arbitrary<number[][]> {
  return fc
    .record({
      stems: fc.array(fc.array(tokenArb, { maxLength: 4 * P + 2 }), { minLength: 1, maxLength: 3 }),
      seqs: fc.array(fc.record({ stem: fc.nat(), cut: fc.nat(), tail: fc.array(tokenArb, { maxLength: 2 * P + 2 }) }), {
        minLength: 1,
        maxLength: 12,
      }),
    })
    .map(({ stems, seqs }) => [
      [],
      ...seqs.map((s) => {
        const stem = stems[s.stem % stems.length] as number[];
        return stem.slice(0, s.cut % (stem.length + 1)).concat(s.tail);
      }),
    ]);
}

type CacheOp =
  | { op: "match"; seq: number; max: "cap" | "full" | number }
  | { op: "insert"; seq: number; pages: number }
  | { op: "lock"; handle: number }
  | { op: "unlock"; lock: number }
  | { op: "evict"; how: "none" | "some" | "exact" | "more"; n: number };

const cacheOpArb: fc.Arbitrary<CacheOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("match" as const),
      seq: fc.nat(),
      max: fc.oneof(fc.constant("cap" as const), fc.constant("full" as const), fc.integer({ min: -2, max: 120 })),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("insert" as const), seq: fc.nat(), pages: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("lock" as const), handle: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("unlock" as const), lock: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("evict" as const),
      how: fc.constantFrom("none" as const, "some" as const, "exact" as const, "more" as const),
      n: fc.nat({ max: 80 }),
    }),
  },
);

const pageSizeArb = fc.constantFrom(1, 4, 16);

/** A node the test may lock: the result of a match or insert, alive while its prefix has not been evicted. */
interface Handle {
  node: RadixNode;
  tokens: readonly number[];
  length: number;
  alive: boolean;
}

// ---- properties ---------------------------------------------------------------------------------------------

describe("the radix cache against a map of cached pages", () => {
  it("matches, inserts, locks and evictions agree with the model after every operation", () => {
    const seen = { exactAll: 0, beyond: 0, lockedSkipped: 0, reinserted: 0, emptyMatch: 0, splitMatch: 0 };
    fc.assert(
      fc.property(
        pageSizeArb.chain((P) =>
          fc.record({
            P: fc.constant(P),
            seqs: sequencesArb(P),
            ops: fc.array(cacheOpArb, { minLength: 10, maxLength: 80, size: "max" }),
          }),
        ),
        ({ P, seqs, ops }) => {
          const cache = new RadixCache(P);
          const model = new CacheModel(P);
          const handles: Handle[] = [];
          const held: Handle[] = [];
          const remember = (node: RadixNode, tokens: readonly number[], length: number) => {
            expect(spelled(cache, node)).toEqual(tokens.slice(0, length));
            handles.push({ node, tokens, length, alive: true });
          };
          for (const o of ops) {
            switch (o.op) {
              case "match": {
                const tokens = seqs[o.seq % seqs.length] as number[];
                const max = o.max === "cap" ? tokens.length - 1 : o.max === "full" ? tokens.length : o.max;
                const nodesBefore = [...cache.nodes()].length;
                const m = cache.match(tokens, max);
                expect(m.length).toBe(model.match(tokens, max));
                expect(m.length % P).toBe(0);
                if (tokens.length === 0) seen.emptyMatch++;
                if ([...cache.nodes()].length > nodesBefore) seen.splitMatch++;
                remember(m.node, tokens, m.length);
                break;
              }
              case "insert": {
                const tokens = seqs[o.seq % seqs.length] as number[];
                const length = (o.pages % (Math.floor(tokens.length / P) + 1)) * P;
                for (let l = P; l <= length; l += P) {
                  const key = keyOf(tokens, l);
                  if (model.everEvicted.has(key) && !model.pages.has(key)) {
                    seen.reinserted++;
                    break;
                  }
                }
                const ins = cache.insert(tokens, length);
                expect(ins.length).toBe(model.insert(tokens, length));
                remember(ins.node, tokens, length);
                break;
              }
              case "lock": {
                const alive = handles.filter((h) => h.alive);
                const h = alive[o.handle % Math.max(1, alive.length)];
                if (h === undefined) break;
                cache.lock(h.node);
                model.lock(h.tokens, h.length, 1);
                held.push(h);
                break;
              }
              case "unlock": {
                const h = held.splice(o.lock % Math.max(1, held.length), 1)[0];
                if (h === undefined) break;
                cache.unlock(h.node);
                model.lock(h.tokens, h.length, -1);
                break;
              }
              case "evict": {
                const evictable = model.evictableTokens;
                const n =
                  o.how === "none"
                    ? -(o.n % 2)
                    : o.how === "some"
                      ? 1 + (o.n % (5 * P))
                      : o.how === "exact"
                        ? evictable
                        : evictable + 1 + (o.n % (3 * P));
                if (o.how === "exact" && evictable > 0) seen.exactAll++;
                if (o.how === "more") seen.beyond++;
                const { freed, evicted } = evictBoth(cache, model, n);
                if (freed < n && model.totalTokens > 0) seen.lockedSkipped++;
                for (const h of handles) if (h.length > 0 && evicted.has(keyOf(h.tokens, h.length))) h.alive = false;
                break;
              }
            }
            expectSameCache(cache, model, held.length);
            for (const h of held)
              expect(spelled(cache, h.node), "a locked prefix left the tree").toEqual(h.tokens.slice(0, h.length));
          }
          // Release every lock: everything is evictable, and evicting it all leaves nothing behind.
          for (const h of held.splice(0)) {
            cache.unlock(h.node);
            model.lock(h.tokens, h.length, -1);
          }
          expect(cache.evictableTokens).toBe(cache.totalTokens);
          const total = cache.totalTokens;
          expect(evictBoth(cache, model, total).freed).toBe(total);
          expect(cache.totalTokens).toBe(0);
          expect(cache.root.children.size).toBe(0);
          expect(cache.root.lockRef).toBe(1);
          // ... and an evicted prefix can be cached again.
          const again = seqs[seqs.length - 1] as number[];
          const length = floorToPage(again.length, P);
          expect(cache.insert(again, length).length).toBe(0);
          expect(cache.totalTokens).toBe(length);
          expect(cache.match(again, again.length).length).toBe(length);
        },
      ),
      PARAMS,
    );
    // The runs must reach the cases the property is about.
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(0);
  });

  it("with many leaves, every eviction takes them least recently used first", () => {
    fc.assert(
      fc.property(
        pageSizeArb.chain((P) =>
          fc.record({
            P: fc.constant(P),
            seqs: fc.array(fc.array(tokenArb, { minLength: P, maxLength: 3 * P }), { minLength: 3, maxLength: 24 }),
            touches: fc.array(fc.nat(), { maxLength: 24 }),
            locks: fc.array(fc.nat(), { maxLength: 3 }),
            evictions: fc.array(fc.integer({ min: 1, max: 10 * P }), { minLength: 1, maxLength: 12 }),
          }),
        ),
        ({ P, seqs, touches, locks, evictions }) => {
          const cache = new RadixCache(P);
          const model = new CacheModel(P);
          for (const tokens of seqs) {
            const length = floorToPage(tokens.length, P);
            expect(cache.insert(tokens, length).length).toBe(model.insert(tokens, length));
          }
          for (const t of touches) {
            const tokens = seqs[t % seqs.length] as number[];
            expect(cache.match(tokens, tokens.length).length).toBe(model.match(tokens, tokens.length));
          }
          for (const l of locks) {
            const tokens = seqs[l % seqs.length] as number[];
            const m = cache.match(tokens, tokens.length - 1);
            expect(m.length).toBe(model.match(tokens, tokens.length - 1));
            cache.lock(m.node);
            model.lock(tokens, m.length, 1);
          }
          expectSameCache(cache, model, locks.length);
          for (const n of evictions) {
            evictBoth(cache, model, n);
            expectSameCache(cache, model, locks.length);
          }
        },
      ),
      PARAMS,
    );
  });
});

// ---- the cache and the pool as the scheduler drives them ----------------------------------------------------

/** A running request: its tokens, the locked prefix (whole pages) and the KV it holds. */
interface Running {
  tokens: number[];
  node: RadixNode;
  cached: number;
  kv: number;
}

type FlowOp =
  | { op: "admit"; seq: number }
  | { op: "decode"; req: number; token: number }
  | { op: "checkpoint"; req: number }
  | { op: "finish"; req: number }
  | { op: "retract"; req: number }
  | { op: "evict"; n: number };

const flowOpArb: fc.Arbitrary<FlowOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("admit" as const), seq: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("decode" as const), req: fc.nat(), token: tokenArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("checkpoint" as const), req: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("finish" as const), req: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("retract" as const), req: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("evict" as const), n: fc.nat({ max: 64 }) }) },
);

describe("the pool and the cache as the scheduler drives them", () => {
  it("free + owned + cached is the whole pool after every step, never overdrawn, nothing leaks", () => {
    const seen = { evictedToFit: 0, refused: 0, duplicatesFreed: 0 };
    fc.assert(
      fc.property(
        pageSizeArb.chain((P) =>
          fc.record({
            P: fc.constant(P),
            pages: fc.integer({ min: 2, max: 24 }),
            extra: fc.nat({ max: P - 1 }),
            seqs: sequencesArb(P),
            ops: fc.array(flowOpArb, { minLength: 10, maxLength: 80, size: "max" }),
          }),
        ),
        ({ P, pages, extra, seqs, ops }) => {
          const pool = new PagePool(pages * P + extra, P);
          const cache = new RadixCache(P);
          const model = new CacheModel(P);
          const running: Running[] = [];
          expect(pool.totalPages).toBe(pages);
          expect(pool.capacityTokens).toBe(pages * P);

          const fits = (need: number): boolean => {
            if (pool.freePages < need) {
              const freed = evictBoth(cache, model, (need - pool.freePages) * P).freed;
              if (freed > 0) seen.evictedToFit++;
              pool.release(freed / P);
            }
            return pool.freePages >= need;
          };
          const release = (r: Running) => {
            pool.release(Math.ceil((r.kv - r.cached) / P));
            cache.unlock(r.node);
            model.lock(r.tokens, r.cached, -1);
            running.splice(running.indexOf(r), 1);
          };
          const checkpoint = (r: Running) => {
            const aligned = floorToPage(r.kv, P);
            if (aligned <= r.cached) return;
            const ins = cache.insert(r.tokens, aligned);
            expect(ins.length).toBe(model.insert(r.tokens, aligned));
            expect(ins.length).toBeGreaterThanOrEqual(r.cached); // its own locked prefix is still there
            expect(spelled(cache, ins.node)).toEqual(r.tokens.slice(0, aligned));
            if (ins.length > r.cached) seen.duplicatesFreed++;
            pool.release((ins.length - r.cached) / P);
            cache.lock(ins.node);
            model.lock(r.tokens, aligned, 1);
            cache.unlock(r.node);
            model.lock(r.tokens, r.cached, -1);
            r.node = ins.node;
            r.cached = aligned;
          };
          const pick = (i: number) => running[i % Math.max(1, running.length)];

          for (const o of ops) {
            switch (o.op) {
              case "admit": {
                const tokens = (seqs[o.seq % seqs.length] as number[]).slice();
                const m = cache.match(tokens, tokens.length - 1);
                expect(m.length).toBe(model.match(tokens, tokens.length - 1));
                cache.lock(m.node);
                model.lock(tokens, m.length, 1);
                const r: Running = { tokens, node: m.node, cached: m.length, kv: m.length };
                running.push(r);
                const need = Math.ceil((tokens.length - m.length) / P);
                if (fits(need)) {
                  pool.allocate(need);
                  r.kv = tokens.length;
                } else {
                  seen.refused++;
                  release(r);
                }
                break;
              }
              case "decode": {
                const r = pick(o.req);
                if (r === undefined) break;
                const need = Math.ceil((r.kv + 1 - r.cached) / P) - Math.ceil((r.kv - r.cached) / P);
                if (fits(need)) {
                  pool.allocate(need);
                  r.tokens.push(o.token);
                  r.kv++;
                } else release(r);
                break;
              }
              case "checkpoint": {
                const r = pick(o.req);
                if (r !== undefined) checkpoint(r);
                break;
              }
              case "finish": {
                const r = pick(o.req);
                if (r === undefined) break;
                checkpoint(r);
                release(r);
                break;
              }
              case "retract": {
                const r = pick(o.req);
                if (r !== undefined) release(r);
                break;
              }
              case "evict": {
                pool.release(evictBoth(cache, model, o.n).freed / P);
                break;
              }
            }
            let owned = 0;
            for (const r of running) owned += Math.ceil((r.kv - r.cached) / P);
            expect(pool.freePages).toBeGreaterThanOrEqual(0);
            expect(pool.freePages).toBeLessThanOrEqual(pool.totalPages);
            expect(pool.freePages).toBe(pool.totalPages - owned - model.totalTokens / P);
            expect(pool.freeTokens).toBe(pool.freePages * P);
            expectSameCache(cache, model, running.length);
          }
          // Every request released (finished or retracted): nothing locked, and after evicting all, a full pool.
          running.slice().forEach((r, i) => {
            if (i % 2 === 0) checkpoint(r);
            release(r);
          });
          expect(cache.evictableTokens).toBe(cache.totalTokens);
          expect(cache.root.lockRef).toBe(1);
          for (const n of cache.nodes()) expect(n.lockRef).toBe(0);
          pool.release(evictBoth(cache, model, cache.totalTokens).freed / P);
          expect(cache.totalTokens).toBe(0);
          expect(pool.freePages).toBe(pool.totalPages);
        },
      ),
      PARAMS,
    );
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(0);
  });
});

describe("the page pool against a counter", () => {
  it("allocate and release move the free count by exactly the pages asked, and refuse to overdraw or overfill", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        pageSizeArb,
        fc.array(fc.record({ allocate: fc.boolean(), pages: fc.nat({ max: 30 }) }), { maxLength: 40, size: "max" }),
        (maxTotalTokens, P, ops) => {
          const pool = new PagePool(maxTotalTokens, P);
          const total = Math.floor(maxTotalTokens / P);
          expect(pool.totalPages).toBe(total);
          expect(pool.capacityTokens).toBe(total * P);
          expect(pool.capacityTokens).toBeLessThanOrEqual(maxTotalTokens);
          let free = total;
          for (const o of ops) {
            if (o.allocate) {
              if (o.pages > free) expect(() => pool.allocate(o.pages)).toThrow(/KV pool/);
              else {
                pool.allocate(o.pages);
                free -= o.pages;
              }
            } else if (free + o.pages > total) expect(() => pool.release(o.pages)).toThrow(/KV pool/);
            else {
              pool.release(o.pages);
              free += o.pages;
            }
            expect(pool.freePages).toBe(free);
            expect(pool.freeTokens).toBe(free * P);
          }
        },
      ),
      PARAMS,
    );
  });

  it("ceilToPage and floorToPage are the nearest whole pages up and down", () => {
    fc.assert(
      fc.property(fc.nat({ max: 1000 }), pageSizeArb, (tokens, P) => {
        const up = ceilToPage(tokens, P);
        const down = floorToPage(tokens, P);
        expect(up % P).toBe(0);
        expect(down % P).toBe(0);
        expect(up >= tokens && up - tokens < P).toBe(true);
        expect(down <= tokens && tokens - down < P).toBe(true);
      }),
      PARAMS,
    );
  });
});

describe("what the property tests found", () => {
  it("a match inside an edge keeps the rest of the edge fresh, as SGLang does (it touches the edge before splitting)", () => {
    const cache = new RadixCache(1);
    cache.insert([1, 2, 3], 3);
    cache.insert([5, 6], 2);
    cache.match([1, 2, 9], 3); // splits [1, 2, 3] after [1, 2]: [3] is as fresh as [1, 2]
    cache.evict(1);
    expect(cache.match([5, 6], 2).length).toBe(0); // the least recently used leaf went
    expect(cache.match([1, 2, 3], 3).length).toBe(3);
  });

  it("a second unlock of a request that held only the root throws, rather than unlocking the root", () => {
    const cache = new RadixCache(1);
    const { node } = cache.match([7], 0);
    expect(node).toBe(cache.root);
    cache.lock(node);
    cache.unlock(node);
    expect(() => cache.unlock(node)).toThrow(/unlocking an unlocked node/);
    expect(cache.root.lockRef).toBe(1);
    cache.insert([1, 2], 2);
    expect(cache.evict(5)).toBe(2); // and the root is never evicted
  });

  it("the pool refuses page counts that are negative, fractional or not numbers", () => {
    const pool = new PagePool(8, 1);
    for (const bad of [-1, 0.5, Number.NaN]) {
      expect(() => pool.allocate(bad)).toThrow(/bad page count/);
      expect(() => pool.release(bad)).toThrow(/bad page count/);
    }
    expect(pool.freePages).toBe(8);
  });
});
