import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultTimingModel } from "../../../src/engine/timing-model";
import type { Batch, BatchOutput, Scheduler, StepResult } from "../../../src/scheduler/index";
import { EventLoop } from "../../../src/sim/event-loop";
import { buildFleet, promptIds } from "../../../src/sim/fleet";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { type Scenario, scenarioSchema } from "../../../src/sim/scenario";
import { SimReplica } from "../../../src/sim/sim-replica";
import { runSimulation } from "../../../src/sim/simulation";
import type { WorkloadRequest } from "../../../src/sim/workload";
import { propertyRuns } from "../../support/property-runs";

/**
 * The simulated fleet and its event loop, held against models written from their documentation:
 *
 * - the event loop (src/sim/event-loop.ts): events run in (time, scheduling order), a negative or NaN delay runs
 *   at once after what is already due, `at` never schedules in the past, `run(until)` stops before the first event
 *   after `until` and leaves the clock there; the clock never goes back;
 * - a replica (src/sim/sim-replica.ts, src/sim/fleet.ts): the token-budget scheduler's documented promises (fcfs
 *   admission from the head of the queue, every running request in each decode step, retraction only when the
 *   step does not fit, fewest output tokens first, back of the queue; the KV pool never overdrawn; at most
 *   `maxRunningRequests`, half the pool by default) stepped with the TimingModel's formulas (prefill: overhead +
 *   tokens / rate; decode: base + per request x batch + per 1,000 tokens held; both over the replica's speed);
 *   every request ends once, with exactly its output tokens, never sooner than alone on its replica, exactly then
 *   when alone, and no later than its busy period's work allows (the replica never idles with a request live);
 * - the fleet as `runSimulation` drives it: never more requests on a replica than `maxOngoingRequests` with one
 *   router shard, router restarts included (with n shards each counts only its own: at most n times it); a lost replica takes no request placed after the loss and finishes those it runs; every
 *   request placed on a replica is served exactly once, as the trace says; nothing is left at the end;
 * - determinism: the same inputs give the same trace.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };

/** Float sums of step times: equal up to rounding. */
const EPS_MS = 1e-6;

// ---- the step-time model, from src/engine/timing-model.ts's documentation ----------------------------------

/** The documented defaults ("input throughput about 3,900 tok/s ... 20 + 5 * 0.5 + 2.5 * 0.6 ms"). */
const TIMING = {
  prefillTokensPerS: 3900,
  prefillOverheadS: 0.005,
  decodeBaseS: 0.02,
  decodePerRequestS: 0.0005,
  decodePerKTokenS: 0.0006,
};

/** A prefill batch of `tokens` new tokens: `(overhead + tokens / rate) / speed`, ms. */
function prefillMs(tokens: number, speed: number): number {
  return ((TIMING.prefillOverheadS + tokens / TIMING.prefillTokensPerS) / speed) * 1000;
}

/** A decode step of `batch` requests holding `tokens` tokens: `(base + perRequest * batch + perK * tokens / 1000) / speed`, ms. */
function decodeMs(batch: number, tokens: number, speed: number): number {
  return (
    ((TIMING.decodeBaseS + TIMING.decodePerRequestS * batch + (TIMING.decodePerKTokenS * tokens) / 1000) / speed) * 1000
  );
}

/** A request alone on a replica: its prefill samples the first token, then one decode step per further token. */
function aloneMs(prompt: number, output: number, speed: number): number {
  let ms = prefillMs(prompt, speed);
  for (let k = 1; k < output; k++) ms += decodeMs(1, prompt + k, speed);
  return ms;
}

function near(actual: number, expected: number, what: string): void {
  if (!(Math.abs(actual - expected) <= EPS_MS)) throw new Error(`${what}: ${actual} != ${expected}`);
}

function scenarioOf(fleet: Record<string, unknown>, over: Record<string, unknown> = {}): Scenario {
  return scenarioSchema.parse({
    name: "fleet-property",
    title: "fleet property",
    description: "test",
    seed: 7,
    phases: [{ durationS: 5, load: 1 }],
    tailS: 120,
    fleet,
    router: { shards: 1, maxQueuedRequests: 4, queueTimeoutS: 5 },
    requests: { prompt: { kind: "fixed", tokens: 8 }, output: { kind: "fixed", tokens: 4 } },
    client: { maxRetries: 2 },
    ...over,
  });
}

// ---- the event loop ---------------------------------------------------------------------------------------

interface LoopOp {
  path: string;
  kind: "after" | "at";
  /** The delay (`after`) or the absolute time (`at`), ms. */
  value: number;
  children: LoopOp[];
}
type LoopStep = { kind: "schedule"; op: LoopOp } | { kind: "run"; until: number };

const delayArb = fc.oneof(
  fc.integer({ min: -5, max: 40 }),
  fc.constantFrom(0, Number.NaN, -0.5, 0.1, 0.2, 0.30000000000000004),
  fc.double({ min: 0, max: 40, noNaN: true }),
);
const atArb = fc.oneof(fc.integer({ min: -10, max: 120 }), fc.double({ min: -10, max: 120, noNaN: true }));
/** A generated event before it is given its path. */
type RawOp = { kind: "after" | "at"; delay: number; at: number; children: RawOp[] };
const opShape = (children: fc.Arbitrary<RawOp[]>): fc.Arbitrary<RawOp> =>
  fc.record({
    kind: fc.constantFrom("after" as const, "at" as const),
    delay: delayArb,
    at: atArb,
    children,
  });

/** Events three deep: run at top level, and each may schedule more when it runs. */
const loopProgramArb = fc
  .array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: opShape(fc.array(opShape(fc.array(opShape(fc.constant([])), { maxLength: 2 })), { maxLength: 3 })),
      },
      {
        weight: 1,
        arbitrary: fc.oneof(fc.double({ min: -10, max: 200, noNaN: true }), fc.constant(Number.POSITIVE_INFINITY)),
      },
    ),
    { maxLength: 25 },
  )
  .map((raw) => {
    const toOp = (r: RawOp, path: string): LoopOp => ({
      path,
      kind: r.kind,
      value: r.kind === "after" ? r.delay : r.at,
      children: r.children.map((c, i) => toOp(c, `${path}.${i}`)),
    });
    return raw.map(
      (r, i): LoopStep =>
        typeof r === "number" ? { kind: "run", until: r } : { kind: "schedule", op: toOp(r, `${i}`) },
    );
  });

/** `after`'s documented delay: a negative or NaN one means "at once". */
function delayOf(delayMs: number): number {
  // biome-ignore lint/complexity/useMathMinMax: Math.max(NaN, 0) is NaN; the documented NaN delay is 0.
  return delayMs > 0 ? delayMs : 0;
}

/** The documented loop as a sorted list: pending events keyed by (time, scheduling order). */
class ModelLoop {
  now = 0;
  private seq = 0;
  pending: { atMs: number; seq: number; op: LoopOp }[] = [];
  readonly ran: string[] = [];

  schedule(op: LoopOp): void {
    // after: now + delay, a negative or NaN delay meaning "at once"; at: never in the past.
    const atMs = op.kind === "after" ? this.now + delayOf(op.value) : Math.max(op.value, this.now);
    this.pending.push({ atMs, seq: this.seq++, op });
  }

  run(until: number): void {
    for (;;) {
      let best = -1;
      this.pending.forEach((e, i) => {
        const b = this.pending[best];
        if (b === undefined || e.atMs < b.atMs || (e.atMs === b.atMs && e.seq < b.seq)) best = i;
      });
      const next = this.pending[best];
      if (next === undefined || next.atMs > until) break;
      this.pending.splice(best, 1);
      this.now = next.atMs;
      this.ran.push(`${next.op.path}@${next.atMs}`);
      for (const c of next.op.children) this.schedule(c);
    }
    if (Number.isFinite(until)) this.now = Math.max(this.now, until);
  }
}

describe("EventLoop (model-based)", () => {
  it("runs events in (time, scheduling order), clamps past and negative times, stops at the horizon", () => {
    fc.assert(
      fc.property(loopProgramArb, (program) => {
        const loop = new EventLoop();
        const model = new ModelLoop();
        const ran: string[] = [];
        let clock = loop.now();
        const schedule = (op: LoopOp, expectedAt: number) => {
          const run = () => {
            expect(loop.now()).toBe(expectedAt);
            expect(loop.now()).toBeGreaterThanOrEqual(clock);
            clock = loop.now();
            ran.push(`${op.path}@${loop.now()}`);
            for (const c of op.children) schedule(c, expectedAtOf(c, loop.now()));
          };
          if (op.kind === "after") loop.after(op.value, run);
          else loop.at(op.value, run);
        };
        const expectedAtOf = (op: LoopOp, now: number) =>
          op.kind === "after" ? now + delayOf(op.value) : Math.max(op.value, now);
        for (const step of program) {
          if (step.kind === "schedule") {
            schedule(step.op, expectedAtOf(step.op, loop.now()));
            model.schedule(step.op);
          } else {
            loop.run(step.until);
            model.run(step.until);
            expect(loop.now()).toBeGreaterThanOrEqual(clock);
            clock = loop.now();
          }
          expect(ran).toEqual(model.ran);
          expect(loop.now()).toBe(model.now);
          expect(loop.pending).toBe(model.pending.length);
        }
        loop.run();
        model.run(Number.POSITIVE_INFINITY);
        expect(ran).toEqual(model.ran);
        expect(loop.pending).toBe(0);
      }),
      PARAMS,
    );
  });
});

// ---- one replica, or a few, driven directly ------------------------------------------------------------------

interface RequestSpec {
  id: string;
  replica: number;
  arrivalMs: number;
  prompt: number;
  output: number;
  maxTokens: number;
}

type Item = { id: string; prompt: number; out: number; extend?: number; lastChunk?: boolean };
type LogEntry =
  | { e: "submit"; t: number; replica: string; id: string }
  | { e: "batch"; t: number; replica: string; kind: Batch["kind"]; items: Item[]; aborted: number }
  | { e: "complete"; t: number; replica: string; ended: { id: string; reason: string; out: number }[] }
  | { e: "done"; t: number; replica: string; id: string; ok: boolean }
  | { e: "check"; t: number; replica: string; queueLength: number; inFlight: boolean };

/** Records every batch a replica's scheduler decides and completes, in the order it happens. */
function instrument(
  replica: SimReplica,
  loop: EventLoop,
  log: LogEntry[],
): { scheduler: Scheduler; inFlight: () => boolean } {
  const scheduler = (replica as unknown as { scheduler: Scheduler }).scheduler;
  const next = scheduler.nextBatch.bind(scheduler);
  const complete = scheduler.completeBatch.bind(scheduler);
  let inFlight = false;
  scheduler.nextBatch = (now: number): Batch => {
    const batch = next(now);
    const items: Item[] =
      batch.kind === "prefill"
        ? batch.entries.map((e) => ({
            id: e.request.id,
            prompt: e.request.promptTokenIds.length,
            out: e.request.outputTokenIds.length,
            extend: e.extendTokens,
            lastChunk: e.lastChunk,
          }))
        : batch.kind === "decode"
          ? batch.requests.map((r) => ({ id: r.id, prompt: r.promptTokenIds.length, out: r.outputTokenIds.length }))
          : [];
    log.push({
      e: "batch",
      t: loop.now(),
      replica: replica.name,
      kind: batch.kind,
      items,
      aborted: batch.ended.length,
    });
    inFlight = batch.kind !== "idle";
    return batch;
  };
  scheduler.completeBatch = (output: BatchOutput): StepResult => {
    const result = complete(output);
    inFlight = false;
    log.push({
      e: "complete",
      t: loop.now(),
      replica: replica.name,
      ended: result.ended.map((e) => ({ id: e.id, reason: e.reason, out: e.outputTokenIds.length })),
    });
    return result;
  };
  return { scheduler, inFlight: () => inFlight };
}

/** A failed check, cheaply (the checker runs once per step of every run). */
function must(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

/**
 * Walks one replica's log against the model: its own FIFO queue, running set and token counts; the scheduler's
 * documented rules; the step-time formulas.
 */
function checkReplicaLog(entries: LogEntry[], specs: Map<string, RequestSpec>, speed: number, cap: number): void {
  const maxRunning = Math.max(1, Math.min(Math.floor(cap / 2), 4096));
  const queue: string[] = [];
  /** Running requests in the order they joined the batch. */
  const running = new Set<string>();
  const out = new Map<string, number>();
  const live = new Set<string>();
  const doneAt = new Map<string, number>();
  const busyStart = new Map<string, number>();
  /** Prefills beyond the first (after a retraction): work the busy-period bound must allow for. */
  const extraMs = new Map<string, number>();
  const admitted = new Set<string>();
  let flight: { ids: string[]; t: number; ms: number } | null = null;
  let expectBatchAt: number | null = null;
  let lastEnded = new Set<string>();
  let periodStart = 0;
  let lastT = 0;
  const spec = (id: string) => specs.get(id) as RequestSpec;
  const outOf = (id: string) => out.get(id) as number;
  const fill = (id: string) => spec(id).prompt + outOf(id);
  const need = (list: Iterable<string>) => {
    let n = 0;
    for (const id of list) n += fill(id);
    return n;
  };

  for (const x of entries) {
    must(x.t >= lastT, () => `clock went back: ${x.t} < ${lastT}`);
    lastT = x.t;
    if (expectBatchAt !== null && x.e !== "done") {
      // Work conservation: a submit to an idle replica, or the end of a step, starts the next step at once.
      must(x.e === "batch" && x.t === expectBatchAt, () => `no step started at ${expectBatchAt}: ${JSON.stringify(x)}`);
      expectBatchAt = null;
    }
    switch (x.e) {
      case "submit": {
        if (live.size === 0) periodStart = x.t;
        busyStart.set(x.id, periodStart);
        live.add(x.id);
        queue.push(x.id);
        out.set(x.id, 0);
        if (flight === null) expectBatchAt = x.t;
        break;
      }
      case "batch": {
        must(flight === null, () => "a step started while one was in flight");
        must(x.aborted === 0, () => `aborted at ${x.t}`);
        if (x.kind === "idle") {
          // Never idle with a request waiting or running.
          must(live.size === 0 && queue.length === 0 && running.size === 0, () => `idle at ${x.t} with work`);
          break;
        }
        const ids = x.items.map((i) => i.id);
        must(ids.length > 0, () => "an empty step");
        for (const i of x.items)
          must(i.out === out.get(i.id), () => `${i.id} has ${i.out} tokens, model ${out.get(i.id)}`);
        let ms: number;
        if (x.kind === "prefill") {
          // fcfs: the batch is the head of the queue, in order; no cache, no chunking at these sizes.
          must(
            ids.every((id, k) => queue[k] === id),
            () => `prefill ${ids} is not the head of the queue ${queue}`,
          );
          queue.splice(0, ids.length);
          let held = 0;
          for (const id of running) held += fill(id) - 1;
          let extend = 0;
          for (const i of x.items) {
            must(i.extend === fill(i.id) && i.lastChunk === true, () => `prefill of ${i.id}: ${JSON.stringify(i)}`);
            extend += fill(i.id);
            if (admitted.has(i.id)) extraMs.set(i.id, (extraMs.get(i.id) ?? 0) + prefillMs(fill(i.id), speed));
            admitted.add(i.id);
          }
          must(held + extend <= cap, () => `prefill overdraws the pool: ${held} + ${extend} > ${cap}`);
          must(running.size + ids.length <= maxRunning, () => `more than ${maxRunning} running`);
          ms = prefillMs(extend, speed);
        } else {
          // Every running request, in batch order, less those retracted to make the step fit.
          const before = [...running];
          const kept = new Set(ids);
          const stay = before.filter((id) => kept.has(id));
          must(
            ids.length === stay.length && ids.every((id, k) => stay[k] === id),
            () => `decode ${ids} is not the running batch ${before}`,
          );
          if (stay.length < before.length) {
            const retracted = before.filter((id) => !kept.has(id));
            must(need(before) > cap, () => `retracted ${retracted} though the step fit`);
            // Fewest output tokens first, then the longest prompt, then the later in the batch.
            const victims = before
              .map((id, index) => ({ id, index }))
              .sort((a, b) => outOf(a.id) - outOf(b.id) || spec(b.id).prompt - spec(a.id).prompt || b.index - a.index)
              .map((v) => v.id);
            const order = victims.slice(0, retracted.length);
            must(
              [...order].sort().join() === [...retracted].sort().join(),
              () => `retracted ${retracted}, the documented order gives ${order}`,
            );
            // Until it fits, not one more.
            must(need(ids) + fill(order[order.length - 1] as string) > cap, () => `retracted one too many: ${order}`);
            for (const id of order) {
              running.delete(id);
              queue.push(id);
            }
          }
          must(need(ids) <= cap, () => `decode overdraws the pool: ${need(ids)} > ${cap}`);
          ms = decodeMs(ids.length, need(ids), speed);
        }
        flight = { ids, t: x.t, ms };
        break;
      }
      case "complete": {
        const f = flight;
        if (f === null) throw new Error("completed a step never started");
        near(x.t - f.t, f.ms, "step time");
        const ended: string[] = [];
        for (const id of f.ids) {
          out.set(id, outOf(id) + 1);
          if (outOf(id) >= spec(id).output) ended.push(id);
          else running.add(id);
        }
        for (const id of ended) running.delete(id);
        must(
          ended.join() === x.ended.map((e) => e.id).join(),
          () => `ended ${JSON.stringify(x.ended)}, model ${ended}`,
        );
        for (const e of x.ended)
          must(e.out === spec(e.id).output && e.reason !== "abort", () => `${e.id} ended ${JSON.stringify(e)}`);
        lastEnded = new Set(ended);
        flight = null;
        expectBatchAt = x.t;
        break;
      }
      case "done": {
        must(x.ok, () => `${x.id} failed`);
        must(lastEnded.delete(x.id), () => `${x.id} done outside its last step`);
        must(!doneAt.has(x.id), () => `${x.id} done twice`);
        doneAt.set(x.id, x.t);
        live.delete(x.id);
        const s = spec(x.id);
        const alone = aloneMs(s.prompt, s.output, speed);
        must(x.t - s.arrivalMs >= alone - EPS_MS, () => `${x.id} took ${x.t - s.arrivalMs} ms, alone ${alone}`);
        break;
      }
      case "check": {
        must(x.queueLength === live.size, () => `queueLength ${x.queueLength}, model ${live.size}`);
        must(x.inFlight === (flight !== null), () => `in flight ${x.inFlight} at ${x.t}`);
        must(live.size === 0 || x.inFlight, () => `idle at ${x.t} with ${live.size} live`);
        break;
      }
    }
  }
  expect(expectBatchAt).toBeNull();
  expect(flight).toBeNull();
  expect(live.size).toBe(0);
  expect(queue).toEqual([]);
  expect(running.size).toBe(0);
  expect([...doneAt.keys()].sort()).toEqual([...specs.keys()].sort());

  for (const [id, t] of doneAt) {
    // Busy-period bound: since the replica's last idle moment it has run only steps of requests submitted since,
    // and a step costs at most the sum of what each of its requests' steps would cost alone (plus re-prefills).
    const start = busyStart.get(id) as number;
    let work = 0;
    for (const q of specs.values())
      if (q.arrivalMs >= start && q.arrivalMs <= t)
        work += aloneMs(q.prompt, q.output, speed) + (extraMs.get(q.id) ?? 0);
    must(t - start <= work + EPS_MS, () => `${id} done at ${t}, its busy period from ${start} had ${work} ms of work`);
  }
  // Alone on the replica from its submit to its end: exactly the model's time.
  let liveNow = 0;
  entries.forEach((x, i) => {
    if (x.e === "done") liveNow -= 1;
    if (x.e !== "submit") return;
    liveNow += 1;
    if (liveNow !== 1) return;
    for (let j = i + 1; j < entries.length; j++) {
      const y = entries[j] as LogEntry;
      if (y.e === "submit") return;
      if (y.e === "done" && y.id === x.id) break;
    }
    const s = spec(x.id);
    near((doneAt.get(x.id) as number) - x.t, aloneMs(s.prompt, s.output, speed), `alone time of ${x.id}`);
  });
}

const gapArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 400 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 400, noNaN: true }) },
);
/** Prompt + max_tokens stays below the smallest pool (64), as the scheduler requires of a request it accepts. */
const sizeArbOf = (prompt: fc.Arbitrary<number>, output: fc.Arbitrary<number>, extra: fc.Arbitrary<number>) =>
  fc.record({ gapMs: gapArb, replica: fc.nat(5), prompt, output, extra }).map((r) => ({
    ...r,
    output: Math.max(1, Math.min(r.output, 63 - r.prompt - r.extra)),
  }));
const sizeArb = sizeArbOf(
  fc.integer({ min: 1, max: 24 }),
  fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 20, max: 36 })),
  fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 })),
);
/** Long outputs that nearly reach max_tokens on a small pool: long busy periods, the ratio decays, retractions. */
const pressureSizeArb = sizeArbOf(
  fc.integer({ min: 1, max: 6 }),
  fc.integer({ min: 24, max: 50 }),
  fc.integer({ min: 1, max: 2 }),
);
const speedArb = fc.constantFrom(0.5, 1, 1.7, 4, 10);
const groupsArb = fc.array(fc.record({ count: fc.integer({ min: 1, max: 2 }), speed: speedArb }), {
  minLength: 1,
  maxLength: 2,
});

const replicaCaseArb = fc.oneof(
  fc.record({
    groups: groupsArb,
    maxTotalTokens: fc.integer({ min: 64, max: 200 }),
    requests: fc.array(sizeArb, { minLength: 1, maxLength: 16 }),
    checkpoints: fc.array(fc.double({ min: 0, max: 4000, noNaN: true }), { maxLength: 6 }),
    runUntil: fc.array(fc.double({ min: 0, max: 4000, noNaN: true }), { maxLength: 4 }),
  }),
  fc.record({
    groups: fc.constant([{ count: 1, speed: 10 }]),
    maxTotalTokens: fc.integer({ min: 64, max: 72 }),
    requests: fc.array(pressureSizeArb, { minLength: 8, maxLength: 16 }),
    checkpoints: fc.array(fc.double({ min: 0, max: 4000, noNaN: true }), { maxLength: 6 }),
    runUntil: fc.array(fc.double({ min: 0, max: 4000, noNaN: true }), { maxLength: 4 }),
  }),
);
type ReplicaCase = typeof replicaCaseArb extends fc.Arbitrary<infer T> ? T : never;

function runReplicaCase(c: ReplicaCase) {
  const scenario = scenarioOf({ replicas: c.groups, maxOngoingRequests: 4, maxTotalTokens: c.maxTotalTokens });
  const loop = new EventLoop();
  const fleet = buildFleet(scenario, loop);
  const names = [...fleet.keys()];
  const speeds = c.groups.flatMap((g) => Array.from({ length: g.count }, () => g.speed));
  expect(names).toEqual(speeds.map((_, i) => `http://127.0.0.1:${9000 + i}`));
  const log: LogEntry[] = [];
  const probes = [...fleet.values()].map((replica) => instrument(replica, loop, log));
  const loads = names.map(() => 0);
  [...fleet.values()].forEach((replica, i) => {
    replica.onLoadChange = (delta) => {
      loads[i] = (loads[i] as number) + delta;
      expect(loads[i]).toBe(replica.queueLength);
    };
  });
  const specs: RequestSpec[] = [];
  let t = 0;
  c.requests.forEach((r, i) => {
    t += r.gapMs;
    specs.push({
      id: `q${i}`,
      replica: r.replica % names.length,
      arrivalMs: t,
      prompt: r.prompt,
      output: r.output,
      maxTokens: r.output + r.extra,
    });
  });
  for (const s of specs) {
    loop.at(s.arrivalMs, () => {
      const replica = fleet.get(names[s.replica] as string) as SimReplica;
      log.push({ e: "submit", t: loop.now(), replica: replica.name, id: s.id });
      replica.submit(
        {
          id: s.id,
          promptTokenIds: promptIds(Number(s.id.slice(1)), s.prompt),
          maxTokens: s.maxTokens,
          outputTokens: s.output,
        },
        (ok) => log.push({ e: "done", t: loop.now(), replica: replica.name, id: s.id, ok }),
      );
    });
  }
  for (const at of c.checkpoints)
    loop.at(at, () => {
      [...fleet.values()].forEach((replica, i) => {
        log.push({
          e: "check",
          t: loop.now(),
          replica: replica.name,
          queueLength: replica.queueLength,
          inFlight: (probes[i] as (typeof probes)[number]).inFlight(),
        });
      });
    });
  // Time advances by event, in slices: the clock ends each slice at its horizon, never before where it was.
  for (const until of [...c.runUntil].sort((a, b) => a - b)) {
    const before = loop.now();
    loop.run(until);
    expect(loop.now()).toBe(Math.max(before, until));
  }
  loop.run();
  return { log, specs, names, speeds, fleet, probes, loop };
}

describe("SimReplica and buildFleet (model-based)", () => {
  it("serves every request once, fcfs, within the pool, at the step-time model's pace, never idle with work", () => {
    fc.assert(
      fc.property(replicaCaseArb, (c) => {
        const { log, specs, names, speeds, fleet, probes, loop } = runReplicaCase(c);
        // Nothing left over: no event, no request, no KV slot.
        expect(loop.pending).toBe(0);
        for (const replica of fleet.values()) expect(replica.queueLength).toBe(0);
        for (const { scheduler } of probes) {
          const s = scheduler.state();
          expect([s.running, s.waiting, s.inFlight]).toEqual([0, 0, false]);
          expect(s.freeTokens).toBe(s.maxTotalTokens);
          expect(s.counters.requestsTotal).toBe(s.counters.finishedRequestsTotal);
        }
        let lastT = 0;
        for (const x of log) {
          expect(x.t).toBeGreaterThanOrEqual(lastT);
          lastT = x.t;
        }
        names.forEach((name, i) => {
          const mine = new Map(specs.filter((s) => s.replica === i).map((s) => [s.id, s]));
          checkReplicaLog(
            log.filter((x) => x.replica === name),
            mine,
            speeds[i] as number,
            c.maxTotalTokens,
          );
        });
      }),
      PARAMS,
    );
  });

  it("is deterministic: the same inputs give the same trace", () => {
    fc.assert(
      fc.property(replicaCaseArb, (c) => {
        expect(JSON.stringify(runReplicaCase(c).log)).toBe(JSON.stringify(runReplicaCase(c).log));
      }),
      { ...PARAMS, numRuns: Math.max(1, Math.ceil(RUNS / 4)) },
    );
  });

  it("the timing model's documented defaults and calibration", () => {
    expect({ ...defaultTimingModel, speed: 1 }).toEqual({ ...TIMING, speed: 1 });
    expect(decodeMs(5, 2500, 1)).toBeCloseTo(24, 9);
  });
});

// ---- the fleet under runSimulation ---------------------------------------------------------------------------

const POLICY_IDS = EVAL_POLICIES.map((p) => p.id);

const fleetCaseArb = fc.record({
  groups: groupsArb,
  maxOngoing: fc.integer({ min: 1, max: 4 }),
  maxTotalTokens: fc.integer({ min: 64, max: 256 }),
  maxQueued: fc.integer({ min: 0, max: 6 }),
  queueTimeoutS: fc.constantFrom(0.5, 2, 10),
  loss: fc.option(
    fc.record({ atS: fc.double({ min: 0.001, max: 4, noNaN: true }), replicas: fc.integer({ min: 1, max: 4 }) }),
    {
      nil: undefined,
    },
  ),
  policy: fc.constantFrom(...POLICY_IDS),
  shards: fc.constantFrom(1, 1, 2),
  restartAtS: fc.option(fc.double({ min: 0.001, max: 4, noNaN: true }), { nil: undefined }),
  seed: fc.integer({ min: 0, max: 1000 }),
  requests: fc.array(sizeArb, { minLength: 1, maxLength: 30 }),
});
type FleetCase = typeof fleetCaseArb extends fc.Arbitrary<infer T> ? T : never;

interface Placement {
  replica: string;
  ticket: string;
  t: number;
  queueAfter: number;
  dones: { t: number; ok: boolean }[];
}

function runFleetCase(c: FleetCase) {
  const scenario = scenarioOf(
    {
      replicas: c.groups,
      maxOngoingRequests: c.maxOngoing,
      maxTotalTokens: c.maxTotalTokens,
      ...(c.loss ? { loss: c.loss } : {}),
    },
    {
      seed: c.seed,
      router: {
        shards: c.shards,
        maxQueuedRequests: c.maxQueued,
        queueTimeoutS: c.queueTimeoutS,
        ...(c.restartAtS !== undefined ? { restartAtS: c.restartAtS } : {}),
      },
    },
  );
  let t = 0;
  const workload: WorkloadRequest[] = c.requests.map((r, id) => {
    t += r.gapMs / 4;
    return { id, arrivalMs: t, promptTokens: r.prompt, outputTokens: r.output, maxTokens: r.output + r.extra };
  });
  const placements: Placement[] = [];
  const times: number[] = [];
  const original = SimReplica.prototype.submit;
  SimReplica.prototype.submit = function (this: SimReplica, request, done) {
    const loop = (this as unknown as { loop: EventLoop }).loop;
    const p: Placement = { replica: this.name, ticket: request.id, t: loop.now(), queueAfter: 0, dones: [] };
    placements.push(p);
    times.push(loop.now());
    original.call(this, request, (ok) => {
      p.dones.push({ t: loop.now(), ok });
      times.push(loop.now());
      done(ok);
    });
    p.queueAfter = this.queueLength;
  };
  try {
    const policy = EVAL_POLICIES.find((p) => p.id === c.policy) as (typeof EVAL_POLICIES)[number];
    const trace = runSimulation(scenario, policy, workload);
    return { scenario, workload, trace, placements, times };
  } finally {
    SimReplica.prototype.submit = original;
  }
}

describe("the fleet under runSimulation (model-based)", () => {
  it("holds maxOngoingRequests per replica, honours a loss, serves every placed request exactly once", () => {
    fc.assert(
      fc.property(fleetCaseArb, (c) => {
        const { scenario, workload, trace, placements, times } = runFleetCase(c);
        const forwardMs = scenario.network.forwardMs;
        const spanMs = trace.spanS * 1000;
        const speeds = c.groups.flatMap((g) => Array.from({ length: g.count }, () => g.speed));
        const names = speeds.map((_, i) => `http://127.0.0.1:${9000 + i}`);
        const lost = new Set(c.loss ? names.slice(-c.loss.replicas) : []);
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1] as number);

        const byTicket = new Map<string, Placement>();
        for (const p of placements) {
          expect(byTicket.has(p.ticket)).toBe(false);
          byTicket.set(p.ticket, p);
          // The router's cap, as the replica sees it (README: each shard counts only its own requests).
          expect(p.queueAfter).toBeLessThanOrEqual(c.maxOngoing * c.shards);
          // A lost replica takes nothing placed at or after the loss ("stop taking requests at atS").
          if (lost.has(p.replica)) expect(p.t - forwardMs).toBeLessThan((c.loss?.atS as number) * 1000);
          // Every request on a replica ends exactly once, served (a lost replica's running ones finish too).
          expect(p.dones.length).toBeLessThanOrEqual(1);
          if (p.t <= spanMs - 30_000) expect(p.dones.map((d) => d.ok)).toEqual([true]);
        }

        expect(trace.requests.map((r) => r.id).sort((a, b) => a - b)).toEqual(workload.map((w) => w.id));
        for (const r of trace.requests) {
          const w = workload[r.id] as WorkloadRequest;
          expect(r.arrivalMs).toBe(w.arrivalMs);
          const mine = placements.filter((p) => p.ticket.split(".")[0] === String(r.id));
          // A logical request is placed on a replica at most once.
          expect(mine.length).toBeLessThanOrEqual(1);
          r.attempts.forEach((a, n) => {
            expect(a.atMs).toBeGreaterThanOrEqual(r.arrivalMs);
            expect(a.answeredAtMs).toBeGreaterThanOrEqual(a.atMs);
            const p = byTicket.get(`${r.id}.${n}`);
            if (a.outcome === "admitted" && a.answeredAtMs + forwardMs <= spanMs) expect(p).toBeDefined();
            if (p) {
              expect(a.outcome).toBe("admitted");
              near(p.t, a.answeredAtMs + forwardMs, "forward");
            }
          });
          const p = mine[0];
          if (r.result === "served") {
            if (!p) throw new Error(`request ${r.id} served without a replica`);
            const done = p.dones[0] as { t: number; ok: boolean };
            expect(done.ok).toBe(true);
            near(r.completedAtMs as number, done.t + forwardMs + r.roundTripMs / 2, "completion");
          }
          if (p) {
            const speed = speeds[names.indexOf(p.replica)] as number;
            const done = p.dones[0];
            if (done) {
              expect(done.t - p.t).toBeGreaterThanOrEqual(aloneMs(w.promptTokens, w.outputTokens, speed) - EPS_MS);
              if (done.t + forwardMs + r.roundTripMs / 2 <= spanMs) expect(r.result).toBe("served");
            }
          }
        }
      }),
      PARAMS,
    );
  });

  it("is deterministic: the same seed and inputs give the same trace", () => {
    fc.assert(
      fc.property(fleetCaseArb, (c) => {
        const a = runFleetCase(c);
        const b = runFleetCase(c);
        expect(JSON.stringify(b.trace)).toBe(JSON.stringify(a.trace));
        expect(JSON.stringify(b.placements)).toBe(JSON.stringify(a.placements));
      }),
      { ...PARAMS, numRuns: Math.max(1, Math.ceil(RUNS / 4)) },
    );
  });
});
