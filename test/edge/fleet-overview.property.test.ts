import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QUEUE_LENGTH_STALE_MS } from "../../src/core/queue-length-cache";
import { topTenants } from "../../src/core/tenant-counters";
import type { SpillwayConfig } from "../../src/edge/config";
import type { Env } from "../../src/edge/env";
import { fleetOverview, mergeShards } from "../../src/edge/fleet-overview";
import { replicaLoad } from "../../src/edge/replica-load";
import { type LoadSource, probeReplica, type ReplicaTarget } from "../../src/edge/replica-probe";
import type { ShardStats } from "../../src/edge/router-protocol";
import { propertyRuns } from "../support/property-runs";

/**
 * The dashboard's overview (`fleetOverview`, `GET /spillway/overview`, src/edge/fleet-overview.ts) against the
 * router's own reading of the same replicas (`probeReplica`, src/edge/replica-probe.ts). Held:
 *
 * - for any answer a replica gives (`/load` bodies of any JSON, `/metrics` pages with counts, negatives, NaN, ±Inf,
 *   a missing gauge, stale sample timestamps, garbage; any status; an `Age` header fresh or past the stale limit;
 *   a network error), the dashboard shows a replica's queue length exactly when the router's probe reads one, and
 *   the same number: what the router reads as unknown (a negative `/load` queueLength, a page a cache served
 *   stale) is unknown (null) on the dashboard too, never shown as a figure the router does not route by;
 * - no figure the dashboard shows as a count (queue, running, waiting) is negative;
 * - `mergeShards` sums a deployment's shards: depths, leases and counters add, the bound is -1 when any shard's is
 *   unlimited, the drain rate is the sum of the shards that have one (null when none has), the histogram's counts
 *   add per bound, the observations are the latest 64 in time order, the ledgers' promises add and their trust is
 *   the mean, and the fresh-arrival forecast (the dashboard's tooltip reads it) is the sum of the shards that have one;
 *   tenants add by name, whatever the name (`__proto__` included: the config allows it), polluting no prototype.
 */

const { seed: SEED, numRuns: RUNS } = propertyRuns(120, 20261206);
const NOW = 1_750_000_000_000;

type MetricsKind = Exclude<LoadSource, "spillway" | "none">;
const QUEUE: Record<MetricsKind, readonly string[]> = {
  vllm: ["vllm:num_requests_running", "vllm:num_requests_waiting"],
  sglang: ["sglang:num_running_reqs", "sglang:num_queue_reqs"],
  tgi: ["tgi_queue_size", "tgi_batch_current_size"],
};

/** What one path of a replica answers. */
type Answer = { kind: "network" } | { kind: "http"; status: number; age?: string; body: string };

const value = fc.constantFrom("0", "1", "3", "2.5", "-1", "-0", "NaN", "+Inf", "-Inf", "1e308");
const timestamp = fc.constantFrom("", ` ${NOW}`, ` ${NOW - QUEUE_LENGTH_STALE_MS - 1}`);

/** A Prometheus page for `kind`: each gauge with one or two series, sometimes one left out, sometimes garbage. */
const metricsPage = (kind: MetricsKind): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.array(fc.tuple(value, timestamp), { minLength: 1, maxLength: 2 }),
      fc.array(fc.tuple(value, timestamp), { minLength: 1, maxLength: 2 }),
      fc.constantFrom("none", "drop-first", "drop-second", "garbage"),
    )
    .map(([first, second, flaw]) => {
      const lines: string[] = [];
      const [a, b] = QUEUE[kind];
      if (flaw !== "drop-first")
        for (const [i, [v, ts]] of first.entries()) lines.push(`${a}{dp_rank="${i}"} ${v}${ts}`);
      if (flaw !== "drop-second")
        for (const [i, [v, ts]] of second.entries()) lines.push(`${b}{dp_rank="${i}"} ${v}${ts}`);
      if (flaw === "garbage") lines.push("this is not prometheus text");
      lines.push("sglang:gen_throughput 12.5", "sglang:num_retracted_requests_total 2");
      return `${lines.join("\n")}\n`;
    });

const loadBody = fc.oneof(
  fc
    .record({
      queueLength: fc.constantFrom("0", "4", "2.5", "-1", "-0", "1e400", "-1e400", '"3"', "null", "[]"),
      running: fc.constantFrom("0", "2", "-2", "1e400", '"x"'),
      waiting: fc.constantFrom("0", "1", "-5", "null"),
    })
    .map((r) => `{"queueLength":${r.queueLength},"running":${r.running},"waiting":${r.waiting},"tokenUsage":0.5}`),
  fc.constantFrom("{}", "null", "[]", "3", "<html>bad gateway</html>", ""),
);

const answer = (body: fc.Arbitrary<string>): fc.Arbitrary<Answer> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        {
          kind: fc.constant("http" as const),
          status: fc.constantFrom(200, 200, 203, 404, 503),
          age: fc.constantFrom("0", "10", "11", "60", "abc"),
          body,
        },
        { requiredKeys: ["kind", "status", "body"] },
      ),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "network" as const }) },
  );

/** One replica: where it is, how it reports its load, and what its `/load` and `/metrics` answer. */
const replica = fc.constantFrom<"spillway" | MetricsKind>("spillway", "vllm", "sglang", "tgi").chain((load) =>
  fc.record({
    load: fc.constant(load),
    slashes: fc.constantFrom("", "/"),
    load_: answer(loadBody),
    metrics: answer(load === "spillway" ? metricsPage("sglang") : metricsPage(load)),
  }),
);

/** Stubs `fetch` with each replica's answers, by host and path. */
function stubFetch(answers: Map<string, Answer>): void {
  vi.stubGlobal("fetch", async (input: string | URL): Promise<Response> => {
    const url = new URL(String(input));
    const a = answers.get(url.host + url.pathname) ?? { kind: "http", status: 404, body: "" };
    if (a.kind === "network") throw new TypeError("fetch failed");
    return new Response(a.body, { status: a.status, headers: a.age === undefined ? {} : { age: a.age } });
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

/** A Durable Object namespace whose every router answers `stats` with an idle shard. */
function fakeEnv(): Env {
  const namespace = {
    getByName: (_name: string) => ({
      stats: async (deployment: string, shard: number) => idleShard(deployment, shard),
    }),
  };
  return { DEPLOYMENT_ROUTER: namespace } as unknown as Env;
}

function idleShard(deployment: string, shard: number): ShardStats {
  return {
    deployment,
    shard,
    queueDepth: 0,
    maxQueuedRequests: 10,
    drainRate: null,
    estimatorWarm: false,
    drainCount: 0,
    backoffStreak: 0,
    activeLeases: 0,
    admitted: 0,
    completed: 0,
    rejections: { computed: 0, static_fallback: 0, none: 0 },
    rejectionsByReason: { queue_full: 0, queue_timeout: 0, no_replica_available: 0 },
    suggestedDelayBuckets: [{ le: Number.POSITIVE_INFINITY, count: 0 }],
    suggestedDelaySumS: 0,
    drainTimeError: { buckets: [], sum: 0, count: 0 },
    replicas: {},
    recentObservations: [],
    pendingObservations: 0,
    tenants: {},
    hintedRetries: { admitted: { early: 0, on_time: 0, late: 0 }, refused: { early: 0, on_time: 0, late: 0 } },
    outstandingBookings: 0,
    ledger: null,
    demoted: 0,
    internal: { waiters: 0, recentlyCancelled: 0, pendingObservations: 0 },
    calls: { acquire: 0, releaseCalls: 0, slotsReleased: 0, handedOff: 0 },
  };
}

describe("fleetOverview: the dashboard reads the replicas as the router's probe does", () => {
  it("shows a queue length exactly when the probe reads one, and the same one; never a negative count", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(NOW);
    await fc.assert(
      fc.asyncProperty(fc.array(replica, { minLength: 1, maxLength: 4 }), async (drawn) => {
        const answers = new Map<string, Answer>();
        const targets: ReplicaTarget[] = drawn.map((r, i) => {
          answers.set(`gpu${i}.example/base/load`, r.load_);
          answers.set(`gpu${i}.example/base/metrics`, r.metrics);
          return { url: `http://gpu${i}.example/base${r.slashes}`, load: r.load };
        });
        stubFetch(answers);
        const config = {
          deployments: { llama: { replicas: targets, routerShards: 1, locationHint: undefined } },
        } as unknown as SpillwayConfig;
        const overview = await fleetOverview(fakeEnv(), config);
        const shown = overview.deployments[0]?.replicas ?? [];
        expect(shown.map((r) => r.replica)).toEqual(targets.map((t) => t.url));
        for (const [i, target] of targets.entries()) {
          const probed = await probeReplica(target, 5_000, {}, () => NOW);
          const seen = shown[i];
          const why = `${target.load} /load ${JSON.stringify(drawn[i]?.load_)} /metrics ${JSON.stringify(drawn[i]?.metrics)}`;
          expect(seen?.queueLength, why).toBe(typeof probed === "number" ? probed : null);
          for (const figure of [seen?.queueLength, seen?.running, seen?.waiting])
            if (typeof figure === "number") expect(figure, why).toBeGreaterThanOrEqual(0);
          // A replica read from /metrics alone is up exactly when the probe has a reading.
          if (target.load !== "spillway") expect(seen?.ok, why).toBe(typeof probed === "number");
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("regression: a negative /load queue length and a /metrics page served stale are unknown, as the probe reads them", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(NOW);
    stubFetch(
      new Map<string, Answer>([
        ["a.example/load", { kind: "http", status: 200, body: '{"queueLength":-1,"running":-1,"waiting":0}' }],
        ["a.example/metrics", { kind: "http", status: 200, body: "sglang:gen_throughput 5\n" }],
        [
          "b.example/metrics",
          { kind: "http", status: 200, age: "60", body: "tgi_queue_size 0\ntgi_batch_current_size 0\n" },
        ],
      ]),
    );
    // Were queueLength -1 and running -1 (the router reads the replica as unknown), and an idle replica (0) from a
    // page a cache had held for a minute (the router's probe refuses it by its Age).
    const spillway = await replicaLoad({ url: "http://a.example", load: "spillway" }, undefined, 1_000);
    expect(spillway).toMatchObject({ queueLength: null, running: null, waiting: 0, genThroughput: 5 });
    const tgi = await replicaLoad({ url: "http://b.example", load: "tgi" }, undefined, 1_000);
    expect(tgi).toMatchObject({ ok: false, queueLength: null });
    expect(tgi.error).toContain("stale");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// mergeShards: one deployment's shards summed into the dashboard's view.

const BOUNDS = [1, 2, 5, 10, 20, 30, 60, Number.POSITIVE_INFINITY];

const shardArb = (deployment: string, shard: number): fc.Arbitrary<ShardStats> =>
  fc
    .record({
      queueDepth: fc.nat(100),
      maxQueuedRequests: fc.oneof(fc.constant(-1), fc.nat(100)),
      drainRate: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
      estimatorWarm: fc.boolean(),
      backoffStreak: fc.nat(10),
      activeLeases: fc.nat(50),
      admitted: fc.nat(1000),
      completed: fc.nat(1000),
      rejections: fc.record({ computed: fc.nat(50), static_fallback: fc.nat(50), none: fc.nat(50) }),
      counts: fc.array(fc.nat(20), { minLength: BOUNDS.length, maxLength: BOUNDS.length }),
      observations: fc.array(
        fc.record({
          atMs: fc.integer({ min: NOW, max: NOW + 60_000 }),
          queueDepth: fc.nat(50),
          suggestedS: fc.option(fc.nat(60), { nil: undefined }),
          observedS: fc.nat(60),
        }),
        { maxLength: 40 },
      ),
      tenants: fc
        .uniqueArray(
          fc.tuple(
            fc.oneof(
              fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "other", "anonymous"),
              fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/),
            ),
            fc.record({ admitted: fc.nat(100), shed: fc.nat(100) }),
          ),
          { maxLength: 14, selector: ([name]) => name },
        )
        .map((entries) => Object.fromEntries(entries)),
      ledger: fc.option(
        fc.record({
          promises: fc.record({ made: fc.nat(50), kept: fc.nat(50), broken: fc.nat(50), noShow: fc.nat(50) }),
          trust: fc.double({ min: 0, max: 1, noNaN: true }),
          showRate: fc.double({ min: 0, max: 1, noNaN: true }),
          freshBaseline: fc.option(fc.double({ min: 0, max: 50, noNaN: true }), { nil: null }),
        }),
        { nil: null },
      ),
    })
    .map(({ counts, observations, ...r }) => ({
      ...idleShard(deployment, shard),
      ...r,
      suggestedDelayBuckets: BOUNDS.map((le, i) => ({ le, count: counts[i] ?? 0 })),
      recentObservations: [...observations].sort((a, b) => a.atMs - b.atMs),
    }));

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("mergeShards", () => {
  it("sums the shards of a deployment into one view", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => shardArb("m", i)))),
        (shards) => {
          const view = mergeShards("m", shards, []);
          expect(view.shards).toBe(shards.length);
          expect(view.queueDepth).toBe(sum(shards.map((s) => s.queueDepth)));
          expect(view.activeLeases).toBe(sum(shards.map((s) => s.activeLeases)));
          expect(view.admitted).toBe(sum(shards.map((s) => s.admitted)));
          expect(view.completed).toBe(sum(shards.map((s) => s.completed)));
          expect(view.maxQueuedRequests).toBe(
            shards.some((s) => s.maxQueuedRequests < 0) ? -1 : sum(shards.map((s) => s.maxQueuedRequests)),
          );
          const rates = shards.flatMap((s) => (s.drainRate === null ? [] : [s.drainRate]));
          if (rates.length === 0) expect(view.drainRate).toBeNull();
          else expect(view.drainRate).toBeCloseTo(sum(rates), 9);
          expect(view.estimatorWarm).toBe(shards.every((s) => s.estimatorWarm));
          expect(view.backoffStreak).toBe(Math.max(...shards.map((s) => s.backoffStreak)));
          expect(view.rejected).toBe(sum(shards.flatMap((s) => Object.values(s.rejections))));
          expect(view.suggestedDelayBuckets).toEqual(
            BOUNDS.map((le, i) => ({
              le: Number.isFinite(le) ? le : "+Inf",
              count: sum(shards.map((s) => s.suggestedDelayBuckets[i]?.count ?? 0)),
            })),
          );
          const all = shards.flatMap((s) => s.recentObservations);
          expect(view.recentObservations).toHaveLength(Math.min(64, all.length));
          const atMs = view.recentObservations.map((o) => o.atMs);
          expect(atMs).toEqual([...atMs].sort((a, b) => a - b));
          const latest = [...all].sort((a, b) => b.atMs - a.atMs).slice(0, view.recentObservations.length);
          if (latest.length > 0) expect(atMs[0]).toBe(latest[latest.length - 1]?.atMs);
          // Tenants add by name, whatever the name (the config allows `__proto__`), and pollute nothing.
          const tenants = new Map<string, { admitted: number; shed: number }>();
          for (const s of shards)
            for (const [name, c] of Object.entries(s.tenants)) {
              const into = tenants.get(name) ?? { admitted: 0, shed: 0 };
              tenants.set(name, { admitted: into.admitted + c.admitted, shed: into.shed + c.shed });
            }
          expect(Object.entries(view.tenants)).toEqual(Object.entries(topTenants(Object.fromEntries(tenants), 10)));
          expect(Object.hasOwn(Object.prototype, "admitted")).toBe(false);
          const ledgers = shards.flatMap((s) => (s.ledger ? [s.ledger] : []));
          if (ledgers.length === 0) expect(view.ledger).toBeNull();
          else {
            expect(view.ledger?.promises).toEqual({
              made: sum(ledgers.map((l) => l.promises.made)),
              kept: sum(ledgers.map((l) => l.promises.kept)),
              broken: sum(ledgers.map((l) => l.promises.broken)),
              noShow: sum(ledgers.map((l) => l.promises.noShow)),
            });
            expect(view.ledger?.trust).toBeCloseTo(sum(ledgers.map((l) => l.trust)) / ledgers.length, 9);
            const baselines = ledgers.flatMap((l) => (l.freshBaseline === null ? [] : [l.freshBaseline]));
            if (baselines.length === 0) expect(view.ledger?.freshBaseline).toBeNull();
            else expect(view.ledger?.freshBaseline).toBeCloseTo(sum(baselines), 9);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("regression: a tenant named __proto__ is summed like any other, and Object.prototype is left alone", () => {
    const shard = { ...idleShard("m", 0), tenants: Object.fromEntries([["__proto__", { admitted: 2, shed: 1 }]]) };
    const view = mergeShards("m", [shard, { ...shard, shard: 1 }], []);
    // Was {} and Object.prototype.admitted = NaN: `sum["__proto__"]` read and wrote the prototype.
    expect(Object.entries(view.tenants)).toEqual([["__proto__", { admitted: 4, shed: 2 }]]);
    expect(Object.hasOwn(Object.prototype, "admitted")).toBe(false);
  });
});
