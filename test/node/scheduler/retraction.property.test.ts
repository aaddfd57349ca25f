import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/engine/rng.js";
import {
  type Batch,
  checkSchedulerInvariants,
  NEVER_FITS_AGAIN_MESSAGE,
  OUT_OF_MEMORY_ABORT_MESSAGE,
  Scheduler,
  type SchedulerOptions,
} from "../../../src/scheduler/index.js";
import type { RadixNode } from "../../../src/scheduler/radix-cache.js";
import { Req } from "../../../src/scheduler/request.js";
import { decodePagesNeeded, retract, retractionOrder } from "../../../src/scheduler/retraction.js";
import { propertyRuns } from "../../support/property-runs";
import { itemsOf } from "./drive.js";

/**
 * Retraction held against a model written from the spec (/work/shared/spec/scheduler.md, "Retraction"), not from
 * src/scheduler/retraction.ts:
 *
 * - the check: every running request needs one more slot (page size 1) or, at page size P, one page when its KV
 *   ends on a page boundary; it passes when that many pages are free after evicting the prefix cache, i.e. when
 *   free + evictable covers it;
 * - victims: fewest output tokens first, among equal outputs the longest prompt first (and, where the spec is
 *   silent, among full ties the later request in the batch first: SGLang's stable sort then `pop()`);
 * - at least one is retracted, then more only while the check still fails; one request always stays, and if it
 *   alone still does not fit it is aborted;
 * - a victim's KV is freed at once: the pages it owns beyond its locked cached prefix go back to the pool, and its
 *   lock on that prefix is dropped (the prefix becomes evictable once no other request locks it);
 * - the ratio is then `min(1, (sum out + 20 n) / (sum maxNew + 1))` over the n requests that remain; a decode step
 *   whose check passed decays it by `(init - min) / steps`, not below `min`; a prefill leaves it alone; going idle
 *   resets it to `init`.
 *
 * Properties: `retract` alone on random running batches (with a fake pool + prefix cache behind its context),
 * `retractionOrder` alone, and the scheduler driven by random workloads, each decode check predicted from the
 * state just before it.
 * Each property was checked to fail on hand-made mutations of src/scheduler (victim order, stopping too early or
 * too late, keep-one / abort, page boundary, eviction before the check, ratio decay / reset / formula): the commit
 * that added this file lists them.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(400, 20261117);

// ---- the spec's victim order and stop rule, on plain numbers ---------------------------------------------------

interface Candidate {
  /** Position in the running batch. */
  index: number;
  prompt: number;
  out: number;
  /** Whether the next decode step needs a new page for it. */
  needsPage: boolean;
}

/** Spec order: fewest outputs, then longest prompt, then (SGLang's stable sort + pop) the later one in the batch. */
function specOrder<T extends Candidate>(batch: readonly T[]): T[] {
  const order = [...batch];
  order.sort((a, b) => {
    if (a.out !== b.out) return a.out < b.out ? -1 : 1;
    if (a.prompt !== b.prompt) return a.prompt > b.prompt ? -1 : 1;
    return b.index - a.index;
  });
  return order;
}

interface SpecOutcome<T> {
  retracted: T[];
  aborted: T | null;
  remaining: T[];
}

/**
 * The spec's retraction on a batch that failed the check. `fits(victims)`: whether the requests that are not in
 * `victims` pass the check once every victim's KV is freed.
 */
function specRetract<T extends Candidate>(
  batch: readonly T[],
  fits: (victims: readonly T[]) => boolean,
): SpecOutcome<T> {
  const order = specOrder(batch);
  const retracted: T[] = [];
  let aborted: T | null = null;
  for (const c of order) {
    if (retracted.length > 0 && fits(retracted)) break; // at least one goes; then only while it still fails
    if (retracted.length === batch.length - 1) {
      aborted = c; // the last one alone does not fit either
      break;
    }
    retracted.push(c);
  }
  const gone = new Set<T>(retracted);
  if (aborted !== null) gone.add(aborted);
  return { retracted, aborted, remaining: batch.filter((c) => !gone.has(c)) };
}

const specRatio = (remaining: readonly { out: number; maxNew: number }[], steps = 20): number => {
  let out = 0;
  let maxNew = 0;
  for (const r of remaining) {
    out += r.out;
    maxNew += r.maxNew;
  }
  return Math.min(1, (out + steps * remaining.length) / (maxNew + 1));
};

// ---- property 1: retract() alone ------------------------------------------------------------------------------

interface GenReq {
  prompt: number;
  out: number;
  extraMax: number;
  cachedPages: number;
  /** Its cached prefix is also locked by someone else: dropping its lock frees nothing. */
  shared: boolean;
}

const genReq: fc.Arbitrary<GenReq> = fc.record({
  prompt: fc.integer({ min: 1, max: 9 }),
  out: fc.integer({ min: 1, max: 5 }),
  extraMax: fc.integer({ min: 0, max: 30 }),
  cachedPages: fc.integer({ min: 0, max: 12 }),
  shared: fc.boolean(),
});

const genBatch = fc.record({
  P: fc.constantFrom(1, 1, 2, 4),
  reqs: fc.array(genReq, { minLength: 1, maxLength: 8 }),
  freeDraw: fc.nat(),
  evictableDraw: fc.nat(),
});

describe("retract() picks exactly the spec's victims", () => {
  it("in the spec's order, no more than needed, keeping one (aborting it when alone it does not fit), freeing their pages", () => {
    const seen = { cases: 0, several: 0, aborted: 0, single: 0, tieOnOutput: 0, fullTie: 0, pageSizeOver1: 0 };
    fc.assert(
      fc.property(genBatch, ({ P, reqs: gen, freeDraw, evictableDraw }) => {
        const reqs = gen.map((g, i) => {
          const r = new Req(
            { id: `r${i}`, promptTokenIds: new Array(g.prompt).fill(i), maxNewTokens: g.out + 1 + g.extraMax },
            i,
          );
          for (let k = 0; k < g.out; k++) r.outputTokenIds.push(k);
          // A running request has the KV of its prompt and of every output token but the last (decoded next).
          r.kvLength = g.prompt + g.out - 1;
          r.cachedLength = Math.min(g.cachedPages, Math.floor(r.kvLength / P)) * P;
          return r;
        });
        const snap = reqs.map((r, index) => ({
          index,
          req: r,
          prompt: gen[index]?.prompt as number,
          out: gen[index]?.out as number,
          needsPage: P === 1 || r.kvLength % P === 0,
          /** Pages freed by retracting it: its own pages, plus its cached prefix unless someone else locks it. */
          frees: Math.ceil((r.kvLength - r.cachedLength) / P) + (gen[index]?.shared ? 0 : r.cachedLength / P),
        }));
        const need = snap.filter((c) => c.needsPage).length;
        if (need === 0) return; // the check passes: retract() is not called
        // Short of `need`: free + evictable pages below it.
        const free0 = freeDraw % need;
        const evictable0 = evictableDraw % (need - free0);

        // The fake pool + cache behind the context (mirrors the scheduler's `fits` and `releaseKv`).
        let free = free0;
        let evictable = evictable0;
        const released: Req[] = [];
        const shared = new Map(reqs.map((r, i) => [r, gen[i]?.shared === true]));
        const out = retract(
          {
            pageSize: P,
            fits: (pages) => {
              if (free < pages) {
                const evicted = Math.min(pages - free, evictable);
                free += evicted;
                evictable -= evicted;
              }
              return free >= pages;
            },
            release: (r) => {
              expect(released).not.toContain(r);
              released.push(r);
              free += Math.ceil((r.kvLength - r.cachedLength) / P);
              if (shared.get(r) !== true) evictable += r.cachedLength / P;
              r.kvLength = 0;
              r.cachedLength = 0;
              r.node = null;
            },
          },
          reqs,
        );

        const model = specRetract(snap, (victims) => {
          let avail = free0 + evictable0;
          for (const v of victims) avail += v.frees;
          return snap.filter((c) => !victims.includes(c) && c.needsPage).length <= avail;
        });
        const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id);
        expect(ids(out.retracted)).toEqual(model.retracted.map((c) => c.req.id));
        expect(out.aborted?.id ?? null).toBe(model.aborted?.req.id ?? null);
        expect(ids(out.remaining)).toEqual(model.remaining.map((c) => c.req.id)); // batch order
        // Exactly the victims (and the aborted one) were released, in retraction order, each once.
        expect(ids(released)).toEqual(
          [...model.retracted, ...(model.aborted ? [model.aborted] : [])].map((c) => c.req.id),
        );
        // Their pages came back: free + evictable grew by exactly what they held.
        let freed = 0;
        for (const c of [...model.retracted, ...(model.aborted ? [model.aborted] : [])]) freed += c.frees;
        expect(free + evictable).toBe(free0 + evictable0 + freed);
        // What stays fits the next decode step (unless the last one was aborted).
        if (model.aborted === null)
          expect(free + evictable).toBeGreaterThanOrEqual(decodePagesNeeded(out.remaining, P));
        // The survivors were not touched.
        for (const c of model.remaining) expect(c.req.kvLength).toBe(c.prompt + c.out - 1);

        seen.cases++;
        if (model.retracted.length > 1) seen.several++;
        if (model.aborted !== null) seen.aborted++;
        if (model.retracted.length === 1 && model.aborted === null) seen.single++;
        if (P > 1) seen.pageSizeOver1++;
        const first = specOrder(snap);
        if (first.length > 1 && first[0]?.out === first[1]?.out) {
          seen.tieOnOutput++;
          if (first[0]?.prompt === first[1]?.prompt) seen.fullTie++;
        }
      }),
      { numRuns: RUNS * 5, seed: SEED },
    );
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(20);
  });

  it("retractionOrder sorts by the spec's key alone (a permutation of the batch)", () => {
    fc.assert(
      fc.property(fc.array(genReq, { minLength: 0, maxLength: 10 }), (gen) => {
        const reqs = gen.map((g, i) => {
          const r = new Req({ id: `r${i}`, promptTokenIds: new Array(g.prompt).fill(0), maxNewTokens: 100 }, i);
          for (let k = 0; k < g.out; k++) r.outputTokenIds.push(k);
          return r;
        });
        const model = specOrder(gen.map((g, index) => ({ index, prompt: g.prompt, out: g.out, needsPage: true })));
        expect(retractionOrder(reqs).map((r) => r.id)).toEqual(model.map((c) => `r${c.index}`));
      }),
      { numRuns: RUNS, seed: SEED + 1 },
    );
  });
});

// ---- property 2: the scheduler's decode check, step by step ----------------------------------------------------

interface ReqSnap extends Candidate {
  id: string;
  maxNew: number;
  kv: number;
  cached: number;
  /** The cache nodes its lock holds (its prefix node up to, not including, the root). */
  path: RadixNode[];
}

interface StepSnap {
  P: number;
  running: ReqSnap[];
  freePages: number;
  evictableTokens: number;
  /** Lock count and size of every node some running request locks, before the step. */
  locks: Map<RadixNode, { refs: number; tokens: number }>;
  ratio: number;
}

function snapshot(s: Scheduler): StepSnap {
  const x = s.internals();
  const P = x.pageSize;
  const locks = new Map<RadixNode, { refs: number; tokens: number }>();
  const running = x.running.map((r, index): ReqSnap => {
    const path: RadixNode[] = [];
    for (let n = r.node; n !== null && n.parent !== null; n = n.parent) {
      path.push(n);
      locks.set(n, { refs: n.lockRef, tokens: n.key.length });
    }
    const prompt = r.promptTokenIds.length;
    const out = r.outputTokenIds.length;
    // A running request holds the KV of its prompt and of all its output but the token decoded next, so that
    // token needs a new page when prompt + out - 1 is a whole number of pages (SGLang: (seqlen - 1) % P == 0).
    // (Plain checks, not expect: this runs for every request at every step.)
    if (r.kvLength !== prompt + out - 1)
      throw new Error(`${r.id} holds ${r.kvLength} tokens of KV, not ${prompt + out - 1}`);
    if (x.cache === null && r.cachedLength !== 0) throw new Error(`${r.id} has a cached prefix with the cache off`);
    return {
      index,
      id: r.id,
      prompt,
      out,
      maxNew: r.maxNewTokens,
      kv: r.kvLength,
      cached: r.cachedLength,
      needsPage: P === 1 || (prompt + out - 1) % P === 0,
      path,
    };
  });
  return {
    P,
    running,
    freePages: x.pool.freePages,
    evictableTokens: x.cache === null ? 0 : x.cache.evictableTokens,
    locks,
    ratio: s.state().newTokenRatio,
  };
}

/** Free + evictable tokens once `victims` have released their KV (their pages, and their locks). */
function availableAfter(pre: StepSnap, victims: readonly ReqSnap[]): number {
  let tokens = pre.freePages * pre.P + pre.evictableTokens;
  const dropped = new Map<RadixNode, number>();
  for (const v of victims) {
    tokens += Math.ceil((v.kv - v.cached) / pre.P) * pre.P;
    for (const n of v.path) dropped.set(n, (dropped.get(n) ?? 0) + 1);
  }
  for (const [n, d] of dropped) {
    const l = pre.locks.get(n) as { refs: number; tokens: number };
    if (l.refs - d === 0) tokens += l.tokens;
  }
  return tokens;
}

const needTokens = (pre: StepSnap, reqs: readonly ReqSnap[]) => reqs.filter((r) => r.needsPage).length * pre.P;

const optionsArb = fc.record({
  maxTotalTokens: fc.integer({ min: 40, max: 240 }),
  pageSize: fc.constantFrom(1, 1, 2, 4),
  maxRunningRequests: fc.integer({ min: 2, max: 12 }),
  scheduleConservativeness: fc.constantFrom(0, 0.1, 0.3, 1),
  schedulePolicy: fc.constantFrom("fcfs" as const, "lpm" as const, "lof" as const),
  disableRadixCache: fc.boolean(),
  clipMaxNewTokens: fc.constantFrom(8, 16, 4096),
  newTokenRatioDecaySteps: fc.constantFrom(3, 20, 600),
  chunkedPrefillSize: fc.constantFrom(-1, -1, -1, 16),
});

/** The workload: how often a prompt repeats one of the first three, and the largest max_new_tokens. */
const workloadArb = fc.record({
  repeat: fc.constantFrom(0, 0.3, 0.8),
  maxNewCap: fc.constantFrom(20, 60),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
});

describe("the scheduler's decode check and retraction follow the spec on random workloads", () => {
  it("retracts iff the batch does not fit, exactly the spec's victims, frees exactly their KV, and sets the ratio", () => {
    const seen = {
      decodes: 0,
      evictToFit: 0,
      retractions: 0,
      several: 0,
      lastAborted: 0,
      withCache: 0,
      sharedLock: 0,
      pageSizeOver1: 0,
      idleResets: 0,
      tieOnOutput: 0,
      readmitted: 0,
    };
    fc.assert(
      fc.property(optionsArb, workloadArb, (o, { repeat, maxNewCap, seed }) => {
        const rnd = seededRandom(seed);
        const options: SchedulerOptions = {
          ...o,
          chunkedPrefillSize: o.chunkedPrefillSize > 0 ? Math.max(o.chunkedPrefillSize, o.pageSize) : -1,
        };
        const s = new Scheduler(options);
        const init = Math.min(0.7 * o.scheduleConservativeness, 1);
        const min = init * 0.14;
        const decay = (init - min) / o.newTokenRatioDecaySteps;
        const prefixes = [0, 1].map((k) => Array.from({ length: 8 }, (_, i) => 1000 * (k + 1) + i));
        const earlier: number[][] = [];
        let next = 0;
        const submitSome = () => {
          const n = Math.floor(rnd() * 4);
          for (let i = 0; i < n; i++) {
            const shared = rnd() < 0.5 ? (prefixes[Math.floor(rnd() * 2)] as number[]) : [];
            const own = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => Math.floor(rnd() * 6));
            // Repeated prompts: such requests share all but their last page, so retracting one frees little.
            const again = earlier.length > 0 && rnd() < repeat;
            const promptTokenIds = again
              ? (earlier[Math.floor(rnd() * Math.min(earlier.length, 3))] as number[])
              : [...shared, ...own];
            earlier.push(promptTokenIds);
            try {
              s.submit({
                id: `r${next++}`,
                promptTokenIds,
                maxNewTokens: 1 + Math.floor(rnd() * maxNewCap),
                ignoreEos: rnd() < 0.15,
              });
            } catch {
              // too long for this pool
            }
          }
        };

        const checkStep = (pre: StepSnap, batch: Batch, now: number) => {
          const retraction = batch.events.find((e) => e.type === "retraction");
          const oomAborts = batch.ended.filter((e) => e.message === OUT_OF_MEMORY_ABORT_MESSAGE);
          const st = s.state();
          if (pre.running.length === 0 || (batch.kind === "prefill" && retraction === undefined)) {
            // No decode check this step (nothing ran, or admission produced a prefill first).
            expect(retraction).toBeUndefined();
            expect(oomAborts).toEqual([]);
            expect(st.newTokenRatio).toBe(batch.kind === "idle" ? init : pre.ratio);
            if (batch.kind === "idle") seen.idleResets++;
            return;
          }
          const availBefore = availableAfter(pre, []);
          const need = needTokens(pre, pre.running);
          if (need <= availBefore) {
            // The check passes: no retraction, every running request decodes, the ratio decays once.
            const items = itemsOf(batch);
            const ratio = Math.max(pre.ratio - decay, min);
            const ok = // (the common case, checked cheaply first: expect is slow at this rate)
              retraction === undefined &&
              batch.kind === "decode" &&
              items.length === pre.running.length &&
              items.every((r, i) => r.id === pre.running[i]?.id) &&
              Math.abs(st.newTokenRatio - ratio) < 1e-12 &&
              st.freeTokens + st.evictableTokens === availBefore - need;
            if (!ok) {
              expect(retraction, "retracted although the batch fits").toBeUndefined();
              expect(batch.kind).toBe("decode");
              expect(items.map((r) => r.id)).toEqual(pre.running.map((r) => r.id));
              expect(st.newTokenRatio).toBeCloseTo(ratio, 12);
              expect(st.freeTokens + st.evictableTokens).toBe(availBefore - need);
            }
            seen.decodes++;
            if (need > pre.freePages * pre.P) seen.evictToFit++;
            return;
          }
          const model = specRetract(
            pre.running,
            (victims) =>
              needTokens(
                pre,
                pre.running.filter((r) => !victims.includes(r)),
              ) <= availableAfter(pre, victims),
          );
          if (retraction?.type !== "retraction") throw new Error(`no retraction although ${need} > ${availBefore}`);
          expect(retraction.retractedIds).toEqual(model.retracted.map((r) => r.id));
          expect(oomAborts.map((e) => e.id)).toEqual(model.aborted === null ? [] : [model.aborted.id]);
          for (const e of oomAborts) expect(e).toMatchObject({ reason: "abort", status: 500 });
          expect(retraction.oldRatio).toBe(pre.ratio);
          expect(retraction.newRatio).toBeCloseTo(specRatio(model.remaining), 12);
          expect(retraction.now).toBe(now);
          expect(retraction.inputTokens).toBe(model.retracted.reduce((a, r) => a + r.prompt, 0));
          expect(retraction.outputTokens).toBe(model.retracted.reduce((a, r) => a + r.out, 0));
          // The ratio is overwritten, not decayed; going idle right after resets it.
          expect(st.newTokenRatio).toBeCloseTo(batch.kind === "idle" ? init : specRatio(model.remaining), 12);
          // Victims keep their output and wait again (or end when they could never be admitted again).
          const neverFits = new Set(batch.ended.filter((e) => e.message === NEVER_FITS_AGAIN_MESSAGE).map((e) => e.id));
          for (const v of model.retracted) {
            const view = s.get(v.id);
            if (neverFits.has(v.id)) {
              expect(view).toBeUndefined();
              continue;
            }
            expect(view?.status).toBe("waiting");
            expect(view?.outputTokenIds.length).toBe(v.out);
          }
          if (batch.kind === "decode") {
            expect(batch.requests.map((r) => r.id)).toEqual(model.remaining.map((r) => r.id));
            // Exactly the victims' KV came back, then the survivors took their decode slots.
            const gone = [...model.retracted, ...(model.aborted === null ? [] : [model.aborted])];
            expect(st.freeTokens + st.evictableTokens).toBe(
              availableAfter(pre, gone) - needTokens(pre, model.remaining),
            );
          } else {
            expect(model.remaining).toEqual([]);
          }
          seen.retractions++;
          if (model.retracted.length > 1) seen.several++;
          if (model.aborted !== null) seen.lastAborted++;
          if (!o.disableRadixCache) seen.withCache++;
          if (model.retracted.some((v) => v.path.some((n) => (pre.locks.get(n)?.refs ?? 0) > 1))) seen.sharedLock++;
          if (pre.P > 1) seen.pageSizeOver1++;
          const order = specOrder(pre.running);
          if (order.length > 1 && order[0]?.out === order[1]?.out) seen.tieOnOutput++;
        };

        let steps = 0;
        const drive = (allowSubmit: boolean): boolean => {
          if (allowSubmit) submitSome();
          const pre = snapshot(s);
          const now = steps * 0.01;
          const batch = s.nextBatch(now);
          checkStep(pre, batch, now);
          checkSchedulerInvariants(s);
          if (batch.kind === "idle") return false;
          if (batch.kind === "prefill") {
            for (const e of batch.entries) {
              // A (re-)admitted request prefills its prompt and all its output so far, cached prefix included.
              const fill = e.request.promptTokenIds.length + e.request.outputTokenIds.length;
              if (e.lastChunk) expect(e.startPosition + e.extendTokens).toBe(fill);
              if (e.request.retractions > 0) seen.readmitted++;
            }
          }
          const items = itemsOf(batch);
          const tokenIds = items.map(() => Math.floor(rnd() * 6));
          const stopped = items.filter((r) => !r.ignoreEos && rnd() < 0.02).map((r) => r.id);
          s.completeBatch({ tokenIds, stopped });
          steps++;
          return true;
        };
        for (let i = 0; i < 40; i++) drive(true);
        let guard = 0;
        while (drive(false)) if (++guard > 20_000) throw new Error("did not drain");
      }),
      { numRuns: Math.ceil(RUNS / 3), seed: SEED + 2 },
    );
    // The workloads must reach every path. Several victims at once is the rarest here, reached 2 to 9 times on
    // seeds 1 to 10 (more than 4 failed 5 of them, SEED=7 among them): it must be reached, and the first
    // property, whose batches are built for it, checks it in depth (more than 20 cases on every seed).
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(k === "several" ? 0 : 10);
  });
});
