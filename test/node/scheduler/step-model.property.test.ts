import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/engine/rng.js";
import {
  type Batch,
  checkSchedulerInvariants,
  NEVER_FITS_AGAIN_MESSAGE,
  OUT_OF_MEMORY_ABORT_MESSAGE,
  Scheduler,
  SchedulerInputError,
} from "../../../src/scheduler/index.js";
import { propertyRuns } from "../../support/property-runs";
import { itemsOf } from "./drive.js";

/**
 * The whole step loop held against a small independent model of /work/shared/spec/scheduler.md, written from the
 * spec and not from src/scheduler: with the prefix cache off (so capacity = free slots), fcfs / lof / lpm (which
 * falls back to fcfs without the cache), any page size and
 * chunked prefill on or off, every `nextBatch` is predicted from the model's own state (queue, running batch in
 * order, each request's KV length and outputs, free pages, ratio) and compared with what the scheduler returns:
 *
 * - admission: `remTotal = free - sum(min(maxNew - out, CLIP) * ratio_r)` (ratio 1 for ignore_eos); a candidate
 *   needs `ceil_page(extend) + min(max(maxNew - out, 0), CLIP) < remTotal`, is refused at what is left of
 *   `maxPrefillTokens` or more (SGLang's `>=`) unless it is first, at `maxRunningRequests`, and is charged
 *   `extend + min(maxNew, CLIP)`; a long prompt is
 *   prefilled in page-aligned chunks of the chunk budget, only the last reserving decode tokens;
 * - decode check, victim order (fewest outputs, longest prompt, later in batch), keep-one / abort, the never-fits
 *   abort, the ratio after a retraction, its decay on a passed check and its reset when idle;
 * - `abort` and `finish` (between steps or while one runs) free the request's slots at once;
 * - every submitted request ends exactly once, with the reason the model expects, and the pool never overflows.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(120, 20261206);

interface ModelReq {
  id: string;
  prompt: number;
  maxNew: number;
  ignoreEos: boolean;
  out: number;
  /** Tokens with KV (prompt + output positions). */
  kv: number;
}

const optionsArb = fc.record({
  maxTotalTokens: fc.integer({ min: 40, max: 300 }),
  pageSize: fc.constantFrom(1, 1, 2, 4),
  maxRunningRequests: fc.integer({ min: 1, max: 8 }),
  maxPrefillTokens: fc.integer({ min: 4, max: 150 }),
  chunkedPrefillSize: fc.constantFrom(-1, -1, 8, 16, 48),
  scheduleConservativeness: fc.constantFrom(0, 0.3, 1, 1.5),
  clipMaxNewTokens: fc.constantFrom(0, 8, 32, 4096),
  newTokenRatioDecaySteps: fc.constantFrom(1, 5, 600),
  // lpm falls back to fcfs with the radix cache off (the spec's rule).
  schedulePolicy: fc.constantFrom("fcfs" as const, "lof" as const, "lpm" as const),
});

const ceilP = (n: number, P: number) => Math.ceil(n / P) * P;
const floorP = (n: number, P: number) => Math.floor(n / P) * P;

describe("the scheduler's steps match a model of the spec (prefix cache off; fcfs, lof, lpm)", () => {
  it("admission, decode, retraction, ratio and ends, step by step", () => {
    const seen = { prefills: 0, chunks: 0, retractions: 0, oomAborts: 0, neverFits: 0, zeroOut: 0 };
    fc.assert(
      fc.property(optionsArb, fc.integer({ min: 0, max: 2 ** 31 - 1 }), (o, seed) => {
        const P = o.pageSize;
        const chunkSize = o.chunkedPrefillSize > 0 ? Math.max(o.chunkedPrefillSize, P) : -1;
        const s = new Scheduler({ ...o, chunkedPrefillSize: chunkSize, disableRadixCache: true });
        const rnd = seededRandom(seed);
        const capacity = floorP(o.maxTotalTokens, P);
        const clip = o.clipMaxNewTokens;
        const init = Math.min(0.7 * o.scheduleConservativeness, 1);
        const min = init * 0.14;
        const decay = (init - min) / o.newTokenRatioDecaySteps;
        // The model.
        let ratio = init;
        let freePages = capacity / P;
        const queue: ModelReq[] = [];
        let running: ModelReq[] = [];
        let chunked: ModelReq | null = null;
        const ends = new Map<string, string>();
        const submitted: string[] = [];
        const fill = (r: ModelReq) => r.prompt + r.out;
        const remClipped = (r: ModelReq) => Math.min(Math.max(r.maxNew - r.out, 0), clip);
        const pagesOf = (r: ModelReq) => Math.ceil(r.kv / P);
        const endModel = (r: ModelReq, how: string) => {
          expect(ends.has(r.id), `${r.id} ends twice`).toBe(false);
          ends.set(r.id, how);
          freePages += pagesOf(r);
          r.kv = 0;
        };
        let next = 0;

        const submitSome = () => {
          const n = Math.floor(rnd() * 3);
          for (let i = 0; i < n; i++) {
            const id = `r${next++}`;
            const prompt = 1 + Math.floor(rnd() * (rnd() < 0.2 ? 120 : 30));
            const maxNew = rnd() < 0.1 ? 0 : Math.floor(rnd() * 70);
            const ignoreEos = rnd() < 0.4;
            const promptTokenIds = Array.from({ length: prompt }, (_, k) => (k * 7 + next) % 50);
            const fits = ceilP(prompt, P) + Math.min(maxNew, clip) < capacity;
            if (!fits) {
              expect(() => s.submit({ id, promptTokenIds, maxNewTokens: maxNew, ignoreEos })).toThrow(
                SchedulerInputError,
              );
              continue;
            }
            s.submit({ id, promptTokenIds, maxNewTokens: maxNew, ignoreEos });
            submitted.push(id);
            queue.push({ id, prompt, maxNew, ignoreEos, out: 0, kv: 0 });
          }
        };

        /** The client goes (abort, 499) or a stop string is found (finish, "stop"): one of `among` ends at once. */
        const endOne = (among: readonly ModelReq[]) => {
          const live = among.filter((r) => !ends.has(r.id));
          if (live.length === 0) return;
          const r = live[Math.floor(rnd() * live.length)] as ModelReq;
          if (rnd() < 0.5) {
            expect(s.abort(r.id)?.status).toBe(499);
            endModel(r, "abort");
          } else {
            expect(s.finish(r.id)?.reason).toBe("stop");
            endModel(r, "stop");
          }
          const qi = queue.indexOf(r);
          if (qi >= 0) queue.splice(qi, 1);
          running = running.filter((x) => x !== r);
          if (chunked === r) chunked = null;
        };

        interface Expected {
          kind: "prefill" | "decode" | "idle";
          entries: { r: ModelReq; extend: number; last: boolean }[];
          decode: ModelReq[];
          retracted: string[][];
          newRatios: number[];
          ended: { id: string; message: string }[];
        }

        /** Predict the next batch and apply its start to the model. */
        const predict = (): Expected => {
          const exp: Expected = { kind: "idle", entries: [], decode: [], retracted: [], newRatios: [], ended: [] };
          for (;;) {
            if (chunked !== null || queue.length > 0) {
              // lof: largest maxNewTokens first, stable (a retracted request keeps its place among equals).
              if (o.schedulePolicy === "lof") queue.sort((a, b) => b.maxNew - a.maxNew);
              let scaled = 0;
              let fixed = 0;
              for (const r of running) {
                if (r.ignoreEos) fixed += remClipped(r);
                else scaled += remClipped(r);
              }
              let remTotal = freePages * P - (scaled * ratio + fixed);
              let remPrefill = o.maxPrefillTokens;
              let remChunk = chunkSize > 0 ? chunkSize : Number.POSITIVE_INFINITY;
              const entries: Expected["entries"] = [];
              let stopRound = false;
              if (chunked !== null) {
                const c: ModelReq = chunked;
                const remaining = fill(c) - c.kv;
                if (ceilP(remaining, P) > remChunk) {
                  entries.push({ r: c, extend: floorP(remChunk, P), last: false });
                  stopRound = true;
                } else {
                  entries.push({ r: c, extend: remaining, last: true });
                  remTotal -= ceilP(remaining, P) + Math.min(c.maxNew, clip);
                  remPrefill -= ceilP(remaining, P);
                  remChunk -= ceilP(remaining, P);
                }
              }
              let fromQueue = 0;
              for (const r of stopRound ? [] : queue) {
                if (running.length + entries.length >= o.maxRunningRequests) break;
                const extend = ceilP(fill(r), P);
                if (extend + remClipped(r) >= remTotal) break;
                if (extend >= remPrefill && entries.length > 0) break; // SGLang's >=, not the spec's >
                if (extend > remChunk) {
                  const first = floorP(remChunk, P);
                  if (first <= 0) break;
                  entries.push({ r, extend: first, last: false });
                  fromQueue++;
                  break;
                }
                entries.push({ r, extend: fill(r), last: true });
                fromQueue++;
                remTotal -= extend + Math.min(r.maxNew, clip);
                remPrefill -= extend;
                remChunk -= extend;
              }
              if (entries.length > 0) {
                queue.splice(0, fromQueue);
                chunked = null;
                for (const e of entries) {
                  const before = Math.ceil(e.r.kv / P);
                  e.r.kv += e.extend;
                  freePages -= Math.ceil(e.r.kv / P) - before;
                  if (!e.last) chunked = e.r;
                }
                exp.kind = "prefill";
                exp.entries = entries;
                return exp;
              }
            }
            if (running.length > 0) {
              const needOf = (rs: readonly ModelReq[]) =>
                P === 1 ? rs.length : rs.filter((r) => r.kv % P === 0).length;
              let need = needOf(running);
              if (need <= freePages) {
                ratio = Math.max(ratio - decay, min);
              } else {
                const order = running.map((r, index) => ({ r, index }));
                order.sort((a, b) => a.r.out - b.r.out || b.r.prompt - a.r.prompt || b.index - a.index);
                const retracted: ModelReq[] = [];
                let left = running.length;
                let aborted: ModelReq | null = null;
                let k = 0;
                let firstIter = true;
                while (firstIter || need > freePages) {
                  const victim = (order[k++] as { r: ModelReq }).r;
                  if (left === 1) {
                    aborted = victim;
                    break;
                  }
                  firstIter = false;
                  if (P === 1 || victim.kv % P === 0) need--;
                  freePages += pagesOf(victim);
                  victim.kv = 0;
                  left--;
                  retracted.push(victim);
                }
                running = running.filter((r) => !retracted.includes(r) && r !== aborted);
                for (const r of retracted) {
                  if (ceilP(fill(r), P) + remClipped(r) < capacity) queue.push(r);
                  else {
                    endModel(r, "abort");
                    exp.ended.push({ id: r.id, message: NEVER_FITS_AGAIN_MESSAGE });
                  }
                }
                const sumOut = running.reduce((a, r) => a + r.out, 0);
                const sumMax = running.reduce((a, r) => a + r.maxNew, 0);
                ratio = Math.min(1, (sumOut + 20 * running.length) / (sumMax + 1));
                exp.retracted.push(retracted.map((r) => r.id));
                exp.newRatios.push(ratio);
                if (aborted !== null) {
                  endModel(aborted, "abort");
                  exp.ended.push({ id: aborted.id, message: OUT_OF_MEMORY_ABORT_MESSAGE });
                }
                if (running.length === 0) continue;
                need = needOf(running);
              }
              expect(need).toBeLessThanOrEqual(freePages);
              freePages -= need;
              for (const r of running) r.kv++;
              exp.kind = "decode";
              exp.decode = [...running];
              return exp;
            }
            ratio = init;
            return exp;
          }
        };

        const compare = (batch: Batch, exp: Expected) => {
          expect(batch.kind).toBe(exp.kind);
          if (batch.kind === "prefill") {
            expect(batch.entries.map((e) => [e.request.id, e.extendTokens, e.lastChunk])).toEqual(
              exp.entries.map((e) => [e.r.id, e.extend, e.last]),
            );
          }
          if (batch.kind === "decode") expect(batch.requests.map((r) => r.id)).toEqual(exp.decode.map((r) => r.id));
          const retractions = batch.events.filter((e) => e.type === "retraction");
          expect(retractions.map((e) => e.retractedIds)).toEqual(exp.retracted);
          expect(retractions.map((e) => e.newRatio)).toEqual(exp.newRatios);
          expect(batch.ended.map((e) => ({ id: e.id, message: e.message }))).toEqual(exp.ended);
        };

        const checkState = () => {
          checkSchedulerInvariants(s);
          const st = s.state();
          expect(st.freeTokens).toBe(freePages * P);
          expect(st.usedTokens).toBeLessThanOrEqual(capacity);
          expect(st.newTokenRatio).toBe(ratio);
          expect(st.waiting).toBe(queue.length);
          expect(st.running).toBe(running.length);
        };

        let steps = 0;
        const drive = (allowSubmit: boolean): boolean => {
          if (allowSubmit) {
            submitSome();
            if (rnd() < 0.04) endOne([...queue, ...running, ...(chunked === null ? [] : [chunked])]);
          }
          checkState();
          const exp = predict();
          const batch = s.nextBatch(steps);
          compare(batch, exp);
          checkState();
          seen.retractions += exp.retracted.length;
          seen.oomAborts += exp.ended.filter((e) => e.message === OUT_OF_MEMORY_ABORT_MESSAGE).length;
          seen.neverFits += exp.ended.filter((e) => e.message === NEVER_FITS_AGAIN_MESSAGE).length;
          for (const e of batch.ended) expect(ends.get(e.id)).toBe("abort");
          if (batch.kind === "idle") return false;
          // While the step runs: the request's slots go at once and its token is ignored.
          if (rnd() < 0.04) endOne(batch.kind === "prefill" ? exp.entries.map((e) => e.r) : exp.decode);
          const items = itemsOf(batch);
          const stopped = items.filter((r) => !r.ignoreEos && rnd() < 0.08).map((r) => r.id);
          const done = s.completeBatch({ tokenIds: items.map(() => Math.floor(rnd() * 50)), stopped, now: steps });
          // Model the completion.
          const endedNow: string[] = [];
          const finishIfDone = (r: ModelReq) => {
            const reason = stopped.includes(r.id) ? "stop" : r.out >= r.maxNew ? "length" : null;
            if (reason === null) return false;
            endModel(r, reason);
            endedNow.push(`${r.id}:${reason}`);
            return true;
          };
          if (batch.kind === "prefill") {
            seen.prefills++;
            for (const e of exp.entries) {
              if (ends.has(e.r.id)) continue;
              if (!e.last) {
                seen.chunks++;
                continue;
              }
              if (e.r.out >= e.r.maxNew) {
                seen.zeroOut++;
                endModel(e.r, "length");
                endedNow.push(`${e.r.id}:length`);
                continue;
              }
              e.r.out++;
              if (!finishIfDone(e.r)) running.push(e.r);
            }
          } else {
            for (const r of exp.decode) if (!ends.has(r.id)) r.out++;
            running = running.filter((r) => !ends.has(r.id) && !finishIfDone(r));
          }
          expect(done.ended.map((e) => `${e.id}:${e.reason}`)).toEqual(endedNow);
          steps++;
          return true;
        };

        for (let i = 0; i < 50; i++) drive(true);
        let guard = 0;
        while (drive(false)) if (++guard > 20_000) throw new Error("did not drain");
        for (const id of submitted) expect(ends.has(id), id).toBe(true);
        expect(s.state().freeTokens).toBe(capacity);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // The workloads must reach the hard paths, or the comparison proves little.
    expect(seen.chunks).toBeGreaterThan(0);
    expect(seen.retractions).toBeGreaterThan(0);
    expect(seen.oomAborts + seen.neverFits).toBeGreaterThan(0);
    expect(seen.zeroOut).toBeGreaterThan(0);
  });
});
