import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SubmitOptions } from "../../../src/core/router-core";
import { type AcquireOutcome, acquireSlot, type Carrier, type SlotSource } from "../../../src/edge/acquire-slot";
import type { DeploymentConfig } from "../../../src/edge/config";
import { edgeRouterIO } from "../../../src/edge/router-io";
import { type AcquireAnswer, placement, routerName } from "../../../src/edge/router-protocol";
import { routerUnavailable } from "../../../src/edge/router-unavailable";
import type { CarriedSlots } from "../../../src/edge/slot-batch";
import { propertyRuns } from "../../support/property-runs";

/**
 * The edge's acquire path: how a request asks its router Durable Object for a slot (`acquireSlot`), what the
 * Worker does when the router cannot answer (`routerUnavailable`), and the messages they exchange.
 *
 * - `acquireSlot`, against a fake router whose every call is held open (a queued request, a router that hangs) and
 *   then settled as the script says: admitted (with or without a hand-off leave), rejected with a hint or without
 *   one (also cancelled / router_restart), or thrown as the platform throws (a reset or restart: no flags or a
 *   non-Error; `overloaded`; `remote`, the router's own code). Every acquire ends in exactly one documented outcome:
 *   the first answer, whatever it is, is final and returned unchanged; a `remote` error is rethrown; an overloaded
 *   router is `unavailable/overloaded` after one call; any other failure is retried exactly once, on a fresh stub,
 *   with the same deployment, shard and ticket and the same options plus `waitedMs` = what the options said it had
 *   waited before, plus the time since the first call (clamped at 0), and a second failure is `unavailable` (overloaded or unreachable by its flags) unless `remote`.
 *   Never more than two calls, never a call while one is open, never a call after the outcome; each call carries
 *   exactly what the carrier gave it, and what a failed call carried (only that) is handed back.
 * - `routerUnavailable`: with `shed`, or `pass` past `maxOngoingRequests` requests in flight, a 503
 *   `service_unavailable` with the static Retry-After (`ceil(retryAfterS)`, `retry-after-ms` = round(ms)) or no
 *   such header when unset; with `pass` below the bound, a replica of the deployment and a release that frees
 *   exactly one place however often it is called; one `spillway.router_unavailable` log line per decision.
 * - Messages: answers and carried slots come through structured clone (the RPC's serialization) unchanged; router
 *   names are distinct per (deployment, shard) and give both back; `placement` passes the hint or nothing; the
 *   router's I/O adapter fires a timer once after its delay (never once cancelled) and answers each probe exactly
 *   once (a rejected probe as `undefined`).
 */

const runs = propertyRuns(200, 20261205);

// ---------------------------------------------------------------------------------------------------------------
// Router answers and failures

const replicaUrl = fc.constantFrom("http://10.0.0.1:8000", "http://10.0.0.2:8000", "https://gpu.example/v1");

const answer: fc.Arbitrary<AcquireAnswer> = fc.oneof(
  fc.record(
    {
      kind: fc.constant("admitted" as const),
      replica: replicaUrl,
      handoffMs: fc.integer({ min: 0, max: 10_000 }),
    },
    { requiredKeys: ["kind", "replica"], noNullPrototype: true },
  ),
  // A refusal with a hint (computed, or the static fallback).
  fc.record({
    kind: fc.constant("rejected" as const),
    status: fc.constantFrom(429, 503),
    reason: fc.constantFrom("queue_full" as const, "queue_timeout" as const, "no_replica_available" as const),
    message: fc.string({ maxLength: 12 }),
    rung: fc.constantFrom("computed" as const, "static_fallback" as const),
    retryAfterS: fc.integer({ min: 0, max: 120 }),
    retryAfterMs: fc.integer({ min: 0, max: 120_000 }),
  }),
  // A refusal without one (a cold router without `retryAfterS`, a cancel, the driver's restart answer).
  fc.record(
    {
      kind: fc.constant("rejected" as const),
      status: fc.constantFrom(429, 503, 499, 500),
      reason: fc.constantFrom(
        "queue_full" as const,
        "queue_timeout" as const,
        "cancelled" as const,
        "router_restart" as const,
      ),
      message: fc.string({ maxLength: 12 }),
      rung: fc.constant("none" as const),
      handoffMs: fc.integer({ min: 0, max: 10_000 }),
    },
    { requiredKeys: ["kind", "status", "reason", "message", "rung"], noNullPrototype: true },
  ),
);

/** What the platform throws from a Durable Object call: flags as the runtime sets them, or not an Error at all. */
type Failure =
  | { shape: "error"; message: string; remote?: boolean; overloaded?: boolean }
  | { shape: "value"; value: string | number | null | undefined };

const failure: fc.Arbitrary<Failure> = fc.oneof(
  // A reset or restart ("Network connection lost", "Durable Object reset because its code was updated").
  fc.record({
    shape: fc.constant("error" as const),
    message: fc.constantFrom("Network connection lost.", "Durable Object reset because its code was updated."),
  }),
  fc.record(
    {
      shape: fc.constant("error" as const),
      message: fc.constantFrom("Durable Object is overloaded. Too many requests queued.", "boom"),
      remote: fc.boolean(),
      overloaded: fc.boolean(),
    },
    { requiredKeys: ["shape", "message"], noNullPrototype: true },
  ),
  fc.record({ shape: fc.constant("value" as const), value: fc.constantFrom("reset", 0, null, undefined) }),
);

function thrown(f: Failure): unknown {
  if (f.shape === "value") return f.value;
  const error = new Error(f.message);
  if (f.remote !== undefined) Object.assign(error, { remote: f.remote });
  if (f.overloaded !== undefined) Object.assign(error, { overloaded: f.overloaded });
  return error;
}

const isRemote = (f: Failure) => f.shape === "error" && f.remote === true;
const isOverloaded = (f: Failure) => f.shape === "error" && f.overloaded === true;

/** One call's fate: held open while the clock moves by `heldMs` (a queue, a hang), then answered or thrown. */
interface Step {
  heldMs: number;
  settle: { answer: AcquireAnswer } | { fail: Failure };
}

const step: fc.Arbitrary<Step> = fc.record({
  // Negative: the isolate's clock stepped back (Date.now is not monotonic).
  heldMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 120_000 }), fc.integer({ min: -5_000, max: -1 })),
  settle: fc.oneof(fc.record({ answer }), fc.record({ fail: failure })),
});

const submitOptions: fc.Arbitrary<SubmitOptions | undefined> = fc.option(
  fc.record(
    {
      fingerprint: fc.string({ maxLength: 6 }),
      clientHorizonS: fc.integer({ min: 0, max: 600 }),
      sdkClient: fc.boolean(),
      retry: fc.boolean(),
      tenant: fc.string({ maxLength: 4 }),
      weight: fc.constantFrom(0.5, 1, 2),
      priority: fc.constantFrom("interactive" as const, "batch" as const),
      // A request that already waited somewhere before this acquire (its first arrival is earlier).
      waitedMs: fc.integer({ min: 0, max: 60_000 }),
    },
    { requiredKeys: [], noNullPrototype: true },
  ),
  { nil: undefined },
);

const carried: fc.Arbitrary<CarriedSlots> = fc.record({
  released: fc.array(fc.tuple(fc.uuid(), fc.boolean()), { maxLength: 3 }),
  handedOff: fc.array(
    fc.tuple(
      fc.uuid(),
      fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
      fc.constantFrom(0.5, 1, 2),
      fc.constantFrom("interactive" as const, "batch" as const),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 3 },
  ),
});

/** Enough microtask turns for `acquireSlot` to reach its next call or its outcome. */
async function flush(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

interface Call {
  stub: number;
  deployment: string;
  shard: number;
  ticket: string;
  options: SubmitOptions | undefined;
  carried: CarriedSlots | undefined;
  settle: (s: { answer: AcquireAnswer } | { error: unknown }) => void;
}

/** The documented outcome of a script (README `routerUnavailable`, src/edge/acquire-slot.ts). */
type Expected =
  | { calls: number; ends: "answered"; answer: AcquireAnswer }
  | { calls: number; ends: "unavailable"; cause: "overloaded" | "unreachable"; error: unknown }
  | { calls: number; ends: "throws"; error: unknown };

function expected(script: Step[], errors: unknown[]): Expected {
  for (let i = 0; i < 2; i++) {
    const s = script[i] as Step;
    if ("answer" in s.settle) return { calls: i + 1, ends: "answered", answer: s.settle.answer };
    const f = s.settle.fail;
    if (isRemote(f)) return { calls: i + 1, ends: "throws", error: errors[i] };
    if (isOverloaded(f)) return { calls: i + 1, ends: "unavailable", cause: "overloaded", error: errors[i] };
    if (i === 1) return { calls: 2, ends: "unavailable", cause: "unreachable", error: errors[i] };
  }
  throw new Error("unreachable");
}

describe("acquireSlot under arbitrary router answers and failures", () => {
  it("ends in exactly one documented outcome, retrying exactly as documented", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 3, maxLength: 3 }),
        submitOptions,
        fc.array(carried, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 0, max: 50_000 }),
        async (script, options, batches, withCarrier, startMs, beforeMs) => {
          let clock = startMs;
          const calls: Call[] = [];
          let stubs = 0;
          const routerOf = (): SlotSource => {
            const stub = stubs++;
            return {
              acquire: (deployment, shard, ticket, opts, carriedSlots) =>
                new Promise<AcquireAnswer>((resolve, reject) => {
                  calls.push({
                    stub,
                    deployment,
                    shard,
                    ticket,
                    options: opts === undefined ? undefined : structuredClone(opts),
                    carried: carriedSlots,
                    settle: (s) => ("answer" in s ? resolve(s.answer) : reject(s.error)),
                  });
                }),
            };
          };
          const taken: CarriedSlots[] = [];
          const handedBack: CarriedSlots[] = [];
          const carrier: Carrier | undefined = withCarrier
            ? {
                take: () => {
                  const next = batches[taken.length] as CarriedSlots;
                  taken.push(next);
                  return next;
                },
                failed: (c) => {
                  handedBack.push(c);
                },
              }
            : undefined;
          const errors = script.map((s) => ("fail" in s.settle ? thrown(s.settle.fail) : undefined));
          const want = expected(script, errors);

          let settled: { ok: AcquireOutcome } | { threw: unknown } | undefined;
          let endings = 0;
          const call = { deployment: "llama", shard: 3, ticket: "ticket-1", options };
          acquireSlot(routerOf, call, () => clock, carrier).then(
            (ok) => {
              endings++;
              settled = { ok };
            },
            (threw: unknown) => {
              endings++;
              settled = { threw };
            },
          );
          await flush();
          clock += beforeMs; // acquireSlot read its start before its first call: all of this is time waited
          for (let i = 0; i < want.calls; i++) {
            // One call open, none other, no outcome yet: a queued or hanging request waits, it is not asked again.
            expect(calls).toHaveLength(i + 1);
            expect(settled).toBeUndefined();
            const s = script[i] as Step;
            clock += s.heldMs;
            await flush();
            expect(calls).toHaveLength(i + 1);
            expect(settled).toBeUndefined();
            const c = calls[i] as Call;
            c.settle("answer" in s.settle ? s.settle : { error: errors[i] });
            await flush();
          }
          expect(endings).toBe(1);
          expect(calls).toHaveLength(want.calls); // never a call after the outcome
          expect(stubs).toBe(want.calls); // each call on a stub asked for it (the retry on a fresh one)

          // Same request each time; the retry keeps its place: its options plus the time already waited.
          for (const [i, c] of calls.entries()) {
            expect(c.stub).toBe(i);
            expect([c.deployment, c.shard, c.ticket]).toEqual(["llama", 3, "ticket-1"]);
          }
          expect(calls[0]?.options).toEqual(options ?? {});
          if (want.calls === 2) {
            const waitedMs = (options?.waitedMs ?? 0) + Math.max(0, beforeMs + (script[0] as Step).heldMs);
            expect(calls[1]?.options).toEqual({ ...options, waitedMs });
          }

          // What each call carried came from the carrier; exactly the failed calls' loads are handed back.
          if (withCarrier) {
            expect(taken).toHaveLength(want.calls);
            for (const [i, c] of calls.entries()) expect(c.carried).toBe(taken[i]);
            const failedLoads = calls.filter((_, i) => "fail" in (script[i] as Step).settle).map((c) => c.carried);
            expect(handedBack).toHaveLength(failedLoads.length);
            for (const [i, c] of handedBack.entries()) expect(c).toBe(failedLoads[i]);
          } else {
            for (const c of calls) expect(c.carried).toEqual({ released: [], handedOff: [] });
          }

          if (want.ends === "throws") {
            expect(settled).toEqual({ threw: want.error });
            expect((settled as { threw: unknown }).threw).toBe(want.error);
          } else if (want.ends === "answered") {
            // Final, and unchanged: a refusal's hint (or its absence) is the router's, an admission its replica.
            expect(settled).toEqual({ ok: { kind: "answered", result: want.answer } });
            expect((settled as { ok: { result: unknown } }).ok.result).toBe(want.answer);
          } else {
            expect(settled).toEqual({
              ok: { kind: "unavailable", cause: want.cause, message: String(want.error) },
            });
          }
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// routerUnavailable

type UnavailableOp = { kind: "unavailable"; cause: "overloaded" | "unreachable" } | { kind: "release"; pick: number };

const unavailableOp: fc.Arbitrary<UnavailableOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("unavailable" as const),
      cause: fc.constantFrom("overloaded" as const, "unreachable" as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }) },
);

let runId = 0;

describe("routerUnavailable: shed or pass when the router cannot answer", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sheds with the static Retry-After or passes within the isolate's bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("shed" as const, "pass" as const, undefined),
        fc.option(
          fc.oneof(
            fc.integer({ min: 0, max: 60 }),
            fc.double({ min: 0, max: 60, noNaN: true, noDefaultInfinity: true }),
          ),
          { nil: undefined },
        ),
        fc.integer({ min: 1, max: 3 }),
        fc.uniqueArray(fc.integer({ min: 8001, max: 8009 }), { minLength: 1, maxLength: 3 }),
        fc.array(unavailableOp, { maxLength: 12 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (mode, retryAfterS, maxOngoingRequests, ports, ops, u) => {
          vi.restoreAllMocks();
          const log = vi.spyOn(console, "log").mockImplementation(() => {});
          log.mockClear();
          const deployment = `dep-${runId++}`; // the pass budget is per isolate and deployment: a fresh one per run
          // The fields routerUnavailable reads, as parseConfig leaves them (`routerUnavailable` unset: the default).
          const config = {
            replicas: ports.map((p) => ({ url: `http://127.0.0.1:${p}`, load: "spillway" })),
            maxOngoingRequests,
            routerUnavailable: mode,
            backpressure: { statusCode: 429, retryAfterPolicy: "booked_capacity", jitter: 0.2, retryAfterS },
          } as unknown as DeploymentConfig;
          const passes = mode === "pass";
          const held: { release: (failed: boolean) => void; times: number }[] = [];
          let logged = 0;
          for (const op of ops) {
            if (op.kind === "release") {
              const h = held[op.pick % Math.max(1, held.length)];
              if (!h) continue;
              // A release frees one place however often it is called; the first frees it.
              h.release(op.pick % 2 === 0);
              h.release(false);
              if (h.times === 0) h.times = 1;
              continue;
            }
            const inFlight = held.filter((h) => h.times === 0).length;
            const decision = routerUnavailable(config, deployment, { cause: op.cause, message: "why" }, () => u);
            logged++;
            expect(log).toHaveBeenCalledTimes(logged);
            const line = JSON.parse(String(log.mock.lastCall?.[0]));
            const shouldPass = passes && inFlight < maxOngoingRequests;
            expect(line).toEqual({
              event: "spillway.router_unavailable",
              deployment,
              cause: op.cause,
              action: shouldPass ? "pass" : "shed",
              message: "why",
            });
            if (shouldPass) {
              expect("replica" in decision).toBe(true);
              if (!("replica" in decision)) continue;
              expect(ports.map((p) => `http://127.0.0.1:${p}`)).toContain(decision.replica);
              held.push({ release: decision.release, times: 0 });
            } else {
              expect("response" in decision).toBe(true);
              if (!("response" in decision)) continue;
              const res = decision.response;
              expect(res.status).toBe(503);
              if (retryAfterS === undefined) {
                expect(res.headers.get("retry-after")).toBeNull();
                expect(res.headers.get("retry-after-ms")).toBeNull();
              } else {
                // Jittered as every static hint is (spec: value x (1 + jitter x (2u - 1))), in whole ms rounded up,
                // and the header the second that holds them: clients shed together do not come back together.
                const jitteredMs = retryAfterS * (1 + 0.2 * (2 * u - 1)) * 1000;
                const ms = Number(res.headers.get("retry-after-ms"));
                expect(ms).toBe(Math.max(0, Math.ceil(jitteredMs - 1e-6)));
                expect(res.headers.get("retry-after")).toBe(String(Math.ceil(ms / 1000)));
              }
              const body = (await res.json()) as { error: { type: string; code: string } };
              expect(body.error).toMatchObject({ type: "server_error", code: "service_unavailable" });
            }
          }
          for (const h of held) h.release(false);
          vi.restoreAllMocks();
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Messages

describe("the messages of the acquire path", () => {
  afterEach(() => vi.useRealTimers());

  it("answers and carried slots come through the RPC's serialization unchanged", () => {
    fc.assert(
      fc.property(answer, carried, submitOptions, (a, c, o) => {
        // (fast-check's records may lack a prototype; a message as the Worker builds it has Object's.)
        expect(structuredClone(a)).toStrictEqual({ ...a });
        expect(structuredClone(c)).toStrictEqual({ ...c });
        expect(structuredClone(o)).toStrictEqual(o === undefined ? undefined : { ...o });
      }),
      runs,
    );
  });

  it("router names are one per (deployment, shard) and give both back; placement passes the hint or nothing", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 8 }),
        fc.integer({ min: 0, max: 255 }),
        fc.string({ maxLength: 8 }),
        fc.integer({ min: 0, max: 255 }),
        (d1, s1, d2, s2) => {
          const n1 = routerName(d1, s1);
          const cut = n1.lastIndexOf("#");
          expect([n1.slice(0, cut), Number(n1.slice(cut + 1))]).toEqual([d1, s1]);
          expect(n1 === routerName(d2, s2)).toBe(d1 === d2 && s1 === s2);
        },
      ),
      runs,
    );
    expect(placement(undefined)).toBeUndefined();
    expect(placement("enam")).toEqual({ locationHint: "enam" });
  });

  it("the router's I/O fires each timer once after its delay unless cancelled, and answers each probe once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            delayMs: fc.integer({ min: 0, max: 10_000 }),
            cancelAtMs: fc.option(fc.integer({ min: 0, max: 12_000 }), { nil: undefined }),
          }),
          { maxLength: 6 },
        ),
        fc.array(fc.oneof(fc.constant("reject" as const), fc.integer({ min: 0, max: 50 })), { maxLength: 6 }),
        async (timers, probes) => {
          vi.useFakeTimers({ now: 0 });
          const io = edgeRouterIO({ now: () => 42, probe: () => Promise.resolve(0) });
          expect(io.now()).toBe(42);
          const fired = timers.map(() => [] as number[]);
          const cancels = timers.map((t, i) => io.setTimer(t.delayMs, () => fired[i]?.push(Date.now())));
          for (const [i, t] of timers.entries())
            if (t.cancelAtMs !== undefined) setTimeout(() => cancels[i]?.(), t.cancelAtMs);
          vi.advanceTimersByTime(12_001);
          for (const [i, t] of timers.entries()) {
            const cancelledFirst = t.cancelAtMs !== undefined && t.cancelAtMs < t.delayMs;
            expect(fired[i]).toEqual(cancelledFirst ? [] : [t.delayMs]);
          }
          vi.useRealTimers();

          const answers: unknown[][] = probes.map(() => []);
          const io2 = edgeRouterIO({
            probe: (replica) => {
              const p = probes[Number(replica)];
              return p === "reject" ? Promise.reject(new Error("down")) : Promise.resolve(p);
            },
          });
          for (const i of probes.keys()) io2.probe(String(i), 100, (a) => answers[i]?.push(a));
          await flush();
          for (const [i, p] of probes.entries()) expect(answers[i]).toEqual([p === "reject" ? undefined : p]);
          const t0 = Date.now();
          expect(Math.abs(io2.now() - t0)).toBeLessThan(1000);
        },
      ),
      runs,
    );
  });
});
