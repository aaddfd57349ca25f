import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import type { AcquireResult } from "../../../src/core/router-driver";
import { type BoundJob, jointCurveBound } from "../../../src/sim/curve-bound";
import { EventLoop } from "../../../src/sim/event-loop";
import { PlannedRouter, replannedCompletionS, worstGap } from "../../../src/sim/plan-replay";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

describe("a bound's schedule, request by request (plans)", () => {
  // The queue-aware example of queue-bound.test.ts: ten requests at 0, a queue of 2, 1.6 attempts per request.
  const jobs: BoundJob[] = Array.from({ length: 10 }, () => ({
    arrivalS: 0,
    releaseS: 0.2,
    deadlineS: 100,
    minCompletionS: 0.5,
    queueEndS: 100,
    certainRetry: true,
  }));
  const target = { "5": 0.6, "15": 1, "30": 1, "60": 1, "120": 1 };
  const instance = { jobs, startRateAt: () => 1, burstStarts: 1, endS: 200 };

  it("plans every request it serves once, from the queue as often as the queue allows, never before its release", () => {
    const bound = jointCurveBound(
      highs,
      [{ instances: [instance], target, queueBound: 2, attemptsAtMost: 1.6 }],
      0,
      1,
      {
        plans: true,
      },
    );
    const plan = bound.plans?.[0]?.[0] ?? [];
    expect(plan).toHaveLength(10);
    expect(plan.every((p) => p !== undefined && p.startS >= 0.2)).toBe(true);
    expect(plan.filter((p) => p?.fromQueue)).toHaveLength(4);
    // Six start within 5 s (by 4.5 s: bins 0 to 4), as the curve says.
    expect(plan.filter((p) => (p?.startS ?? 99) <= 4.5)).toHaveLength(6);
  });

  it("leaves out what it does not serve, and returns no plans unless asked", () => {
    // A run that ends at 3 s: bins 0 to 2 start 2 + 1 + 1 of the ten.
    const few = jointCurveBound(highs, [{ instances: [{ ...instance, endS: 3 }], target }], 0, 1, { plans: true });
    const plan = few.plans?.[0]?.[0] ?? [];
    expect(few.curves[0]?.["120"]).toBeCloseTo(0.4, 6);
    expect(plan.filter((p) => p !== undefined)).toHaveLength(4);
    expect(plan.filter((p) => p === undefined)).toHaveLength(6);
    expect(jointCurveBound(highs, [{ instances: [instance], target }]).plans).toBeUndefined();
  });
});

describe("PlannedRouter", () => {
  const setup = (plan: Array<[number, { startS: number; fromQueue: boolean }]>, slots = 1) => {
    const loop = new EventLoop();
    const router = new PlannedRouter({ loop, replicas: ["a"], maxOngoing: slots, lost: new Set() }, new Map(plan), 30);
    const answers: Array<{ id: number; atMs: number; result: AcquireResult }> = [];
    const ask = (id: number) =>
      router.acquire(`${id}.0`, { fingerprint: `req-${id}` }, (result) =>
        answers.push({ id, atMs: loop.now(), result }),
      );
    return { loop, router, answers, ask };
  };

  it("queues a request planned within the queue's timeout (placed at once on a free slot), refuses a later one with it", () => {
    const { loop, answers, ask } = setup([
      [1, { startS: 5, fromQueue: true }],
      [2, { startS: 60, fromQueue: false }],
    ]);
    ask(1);
    ask(2);
    ask(3);
    loop.run(10_000);
    expect(answers.map((a) => [a.id, a.atMs, a.result.kind])).toEqual([
      [1, 0, "admitted"],
      [2, 0, "rejected"],
      [3, 0, "rejected"],
    ]);
    const hint = (id: number) =>
      (answers.find((a) => a.id === id)?.result as { retryAfterS?: number } | undefined)?.retryAfterS;
    expect(hint(2)).toBe(60);
    expect(hint(3)).toBe(120);
  });

  it("places waiting requests earliest planned first as slots free, and refuses one that waited out the timeout", () => {
    const { loop, router, answers, ask } = setup([
      [1, { startS: 0, fromQueue: true }],
      [2, { startS: 3, fromQueue: true }],
      [3, { startS: 1, fromQueue: true }],
    ]);
    ask(1);
    ask(2);
    ask(3);
    loop.after(4000, () => router.release("1.0"));
    loop.run(60_000);
    expect(answers.map((a) => [a.id, a.atMs, a.result.kind])).toEqual([
      [1, 0, "admitted"],
      [3, 4000, "admitted"],
      [2, 30_000, "rejected"],
    ]);
  });

  it("measures a curve against a target by its worst horizon", () => {
    const target = { "5": 0.5, "15": 0.8, "30": 0.9, "60": 0.95, "120": 1 };
    expect(worstGap({ "5": 0.6, "15": 0.7, "30": 0.9, "60": 0.95, "120": 1 }, target)).toEqual({
      gap: expect.closeTo(-0.1, 9),
      horizonS: 15,
    });
  });
});

describe("replannedCompletionS (the re-planned setting's next completion times)", () => {
  const planned = [
    { startS: 10, fromQueue: true },
    { startS: 20, fromQueue: false },
    { startS: 30, fromQueue: false },
    undefined,
  ];

  it("takes a served request's time from its planned start to its answer, as the replay showed it", () => {
    // 1: served 6.5 s after its planned start; 2: never served (the last plan's time stays); 3: served early, before
    // its planned start (a free slot took it), so never below its least time; 4: not in the plan.
    expect(replannedCompletionS([2, 2, 2, 2], [3, 4, 5, 6], planned, [16.5, undefined, 29, 40])).toEqual([
      6.5, 4, 2, 6,
    ]);
  });

  it("falls back on the least time where no earlier plan gave one", () => {
    expect(replannedCompletionS([2, 3], [], [undefined, undefined], [undefined, undefined])).toEqual([2, 3]);
  });
});
