import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/engine/rng.js";
import {
  type Batch,
  checkSchedulerInvariants,
  Scheduler,
  type SchedulerOptions,
} from "../../../src/scheduler/index.js";
import { propertyRuns } from "../../support/property-runs";
import { itemsOf } from "./drive.js";

const optionsArb = fc.record({
  maxTotalTokens: fc.integer({ min: 48, max: 400 }),
  pageSize: fc.constantFrom(1, 1, 2, 4),
  maxRunningRequests: fc.integer({ min: 1, max: 12 }),
  maxPrefillTokens: fc.integer({ min: 8, max: 200 }),
  chunkedPrefillSize: fc.constantFrom(-1, 8, 16, 64),
  scheduleConservativeness: fc.constantFrom(0, 0.3, 1, 1.5),
  schedulePolicy: fc.constantFrom("fcfs" as const, "lpm" as const, "lof" as const, "random" as const),
  disableRadixCache: fc.boolean(),
  clipMaxNewTokens: fc.constantFrom(8, 32, 4096),
  newTokenRatioDecaySteps: fc.constantFrom(5, 600),
});

describe("random workloads keep the scheduler's invariants after every step", () => {
  it("slots are conserved, running requests hold their next slot, every request ends exactly once", () => {
    // The workloads must actually reach the hard paths, or the property proves little.
    const seen = { retractions: 0, oomAborts: 0, chunks: 0 };
    fc.assert(
      fc.property(optionsArb, fc.integer({ min: 0, max: 2 ** 31 - 1 }), (o, seed) => {
        const chunked = o.chunkedPrefillSize > 0 ? Math.max(o.chunkedPrefillSize, o.pageSize) : -1;
        const rnd = seededRandom(seed);
        const options: SchedulerOptions = {
          ...o,
          chunkedPrefillSize: chunked,
          random: seededRandom(seed ^ 0x5bd1e995),
        };
        const s = new Scheduler(options);
        const capacity = s.state().maxTotalTokens;
        const submitted = new Set<string>();
        const endedCount = new Map<string, number>();
        const noteEnd = (id: string) => endedCount.set(id, (endedCount.get(id) ?? 0) + 1);
        const prefixes = [0, 1, 2].map((k) => Array.from({ length: 12 }, (_, i) => k * 100 + i));
        let next = 0;
        const submitSome = () => {
          const n = Math.floor(rnd() * 3);
          for (let i = 0; i < n; i++) {
            const shared = rnd() < 0.5 ? (prefixes[Math.floor(rnd() * 3)] as number[]) : [];
            const own = Array.from({ length: 1 + Math.floor(rnd() * 30) }, () => Math.floor(rnd() * 50));
            const promptTokenIds = [...shared, ...own];
            const maxNewTokens = Math.floor(rnd() * 60);
            const id = `r${next++}`;
            try {
              s.submit({ id, promptTokenIds, maxNewTokens, ignoreEos: rnd() < 0.3 });
              submitted.add(id);
            } catch {
              // too long for this pool: refused, nothing to end
            }
          }
        };
        const check = (batch: Batch | null) => {
          checkSchedulerInvariants(s);
          const st = s.state();
          expect(st.freeTokens).toBeGreaterThanOrEqual(0);
          expect(st.freeTokens + st.cachedTokens).toBeLessThanOrEqual(capacity);
          expect(st.usedTokens).toBeLessThanOrEqual(capacity);
          if (batch?.kind === "decode") expect(batch.requests.length).toBeGreaterThan(0);
        };
        let steps = 0;
        const drive = (allowSubmit: boolean) => {
          if (allowSubmit) submitSome();
          const batch = s.nextBatch(steps * 0.01);
          check(batch);
          for (const e of batch.ended) noteEnd(e.id);
          for (const e of batch.events) {
            if (e.type === "retraction") seen.retractions++;
            if (e.type === "abort") seen.oomAborts++;
          }
          if (batch.kind === "prefill" && batch.entries.some((e) => !e.lastChunk)) seen.chunks++;
          if (batch.kind === "idle") return false;
          const items = itemsOf(batch);
          // Random aborts while the step runs (client gone).
          if (rnd() < 0.05 && items.length > 0) {
            const victim = items[Math.floor(rnd() * items.length)];
            if (victim !== undefined && s.abort(victim.id) !== undefined) noteEnd(victim.id);
            check(null);
          }
          const tokenIds = items.map(() => Math.floor(rnd() * 50));
          const stopped = items.filter((r) => !r.ignoreEos && rnd() < 0.05).map((r) => r.id);
          for (const e of s.completeBatch({ tokenIds, stopped }).ended) noteEnd(e.id);
          check(null);
          steps++;
          return true;
        };
        for (let i = 0; i < 60; i++) drive(true);
        // Drain: no new work; everything must end.
        let guard = 0;
        while (drive(false)) {
          guard++;
          if (guard > 20_000) throw new Error("did not drain");
        }
        for (const id of submitted) expect(endedCount.get(id), id).toBe(1);
        expect(endedCount.size).toBe(submitted.size);
        const st = s.state();
        expect(st.running + st.waiting).toBe(0);
        expect(st.freeTokens + st.evictableTokens).toBe(capacity);
      }),
      propertyRuns(150, 20260701),
    );
    expect(seen.retractions).toBeGreaterThan(0);
    expect(seen.oomAborts).toBeGreaterThan(0);
    expect(seen.chunks).toBeGreaterThan(0);
  });
});
