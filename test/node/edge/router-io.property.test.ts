import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProbeAnswer } from "../../../src/core/router-driver";
import { edgeRouterIO } from "../../../src/edge/router-io";
import { propertyRuns } from "../../support/property-runs";

/**
 * The Durable Object's I/O for the router driver (src/edge/router-io.ts), under fake timers. Held, for any
 * schedule of timers (some cancelled) and any probes (answering a count, unknown, "timeout", or failing):
 *
 * - a timer fires once, at its delay, in delay order, unless cancelled before; cancelling twice or after it fired
 *   is harmless;
 * - a probe's answer is what its promise resolves to, `undefined` when it rejects; exactly once, never before the
 *   promise settles (so never synchronously);
 * - `defer` runs after the code that called it and before any timer; `now` is the clock given, else `Date.now`.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(150, 20261206);

afterEach(() => {
  vi.useRealTimers();
});

describe("edgeRouterIO", () => {
  it("fires each timer once at its delay unless cancelled, and answers each probe once with its outcome", async () => {
    vi.useFakeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ delayMs: fc.nat(1000), cancelAtMs: fc.option(fc.nat(1200), { nil: undefined }) }), {
          maxLength: 8,
        }),
        fc.array(
          fc.record({
            afterMs: fc.nat(500),
            outcome: fc.oneof(
              fc.nat(100).map((n) => ({ answer: n as ProbeAnswer })),
              fc.constant({ answer: undefined as ProbeAnswer }),
              fc.constant({ answer: "timeout" as ProbeAnswer }),
              fc.constant({ fails: true }),
            ),
          }),
          { maxLength: 6 },
        ),
        async (timers, probes) => {
          const start = Date.now();
          const fired: { i: number; atMs: number }[] = [];
          const answers: { i: number; answer: ProbeAnswer; atMs: number }[] = [];
          const io = edgeRouterIO({
            probe: (replica) => {
              const p = probes[Number(replica)] as (typeof probes)[number];
              return new Promise((resolve, reject) =>
                setTimeout(
                  () => ("fails" in p.outcome ? reject(new Error("fetch failed")) : resolve(p.outcome.answer)),
                  p.afterMs,
                ),
              );
            },
          });
          timers.forEach((t, i) => {
            const cancel = io.setTimer(t.delayMs, () => fired.push({ i, atMs: Date.now() - start }));
            if (t.cancelAtMs !== undefined)
              setTimeout(() => {
                cancel();
                cancel(); // twice: harmless
              }, t.cancelAtMs);
          });
          probes.forEach((_, i) => {
            io.probe(String(i), 250, (answer) => answers.push({ i, answer, atMs: Date.now() - start }));
          });
          expect(answers).toEqual([]);
          await vi.advanceTimersByTimeAsync(2000);
          // A timer cancelled at the instant it is due fires: it was scheduled before the cancel was.
          const due = timers.flatMap((t, i) =>
            t.cancelAtMs === undefined || t.cancelAtMs >= t.delayMs ? [{ i, atMs: t.delayMs }] : [],
          );
          expect(fired.map((f) => f.i).sort((a, b) => a - b)).toEqual(due.map((d) => d.i).sort((a, b) => a - b));
          for (const f of fired) expect(f.atMs).toBe(timers[f.i]?.delayMs);
          expect(fired.map((f) => f.atMs)).toEqual([...fired.map((f) => f.atMs)].sort((a, b) => a - b));
          expect(answers.map((a) => a.i).sort((a, b) => a - b)).toEqual(probes.map((_, i) => i));
          for (const a of answers) {
            const p = probes[a.i] as (typeof probes)[number];
            expect(a.answer).toBe("fails" in p.outcome ? undefined : p.outcome.answer);
            expect(a.atMs).toBe(p.afterMs);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("defers after the caller and before timers; reads the clock it is given", async () => {
    vi.useFakeTimers();
    await fc.assert(
      fc.asyncProperty(fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }), async (frozen) => {
        const io = edgeRouterIO({ probe: async () => 0, ...(frozen === undefined ? {} : { now: () => frozen }) });
        const order: string[] = [];
        io.setTimer(0, () => order.push("timer"));
        io.defer(() => order.push("deferred"));
        order.push("caller");
        await vi.advanceTimersByTimeAsync(1);
        expect(order).toEqual(["caller", "deferred", "timer"]);
        expect(io.now()).toBe(frozen ?? Date.now());
      }),
      { numRuns: 20, seed: SEED },
    );
  });
});
