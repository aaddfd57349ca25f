import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ClientsConfig, clientsSchema, DEFAULT_CLIENT_MIX, drawClient } from "../../../src/sim/client-mix";
import {
  CLIENT_PROFILES,
  CLIENT_STYLES,
  type ClientStyle,
  type RetryHeaders,
  retryDelay,
} from "../../../src/sim/client-model";
import { randomStream } from "../../../src/sim/random-streams";
import { type Scenario, scenarioSchema } from "../../../src/sim/scenario";
import { generateWorkload } from "../../../src/sim/workload";
import { propertyRuns } from "../../support/property-runs";

/**
 * The simulator's inputs, held against the real SDK and against models written from their documentation:
 *
 * - openai-node (src/sim/client-model.ts, style `openai_node`) against the installed package `openai` 6.x itself,
 *   nothing of it re-implemented: its backoff is `calculateDefaultRetryTimeoutMillis` called with Math.random
 *   stubbed, equal to `retryDelay(CLIENT_PROFILES.openai_node, {}, n, random)` for every retry count; and the real
 *   client, driven through `chat.completions.create` by an in-process fake fetch (no network, not even loopback)
 *   that answers 429 with `retry-after-ms` / `Retry-After` written as spillway's middleware writes them
 *   (`String(number)`), sleeps exactly the delays `retryDelay` gives (its `sleep` stubbed to record the requested
 *   milliseconds), retries exactly `maxRetries` times as the scenario's `client.maxRetries` says, and sends
 *   `x-stainless-lang: js` and `x-stainless-retry-count: n` as the profile (and the router's `retry` flag) assume.
 *   The header values are any positive number (whole, decimal, tiny, huge) or absent, and, after a positive
 *   `retry-after-ms`, any `Retry-After` at all: the values spillway emits. Outside that (a `retry-after-ms` of 0 or
 *   below, a `Retry-After` of 0 or below without it) the real client and the model part; spillway's routers never
 *   send such values in the evaluation (computed hints are at least 1 s, static ones 1, 5 and 30 s);
 * - the other styles against their documentation in src/sim/client-model.ts (openai-python has no package here):
 *   openai-python and legacy_sdk honour the hint they read (`retry-after-ms` when present, else `Retry-After`)
 *   only in (0, 60] s; header-less clients honour any positive whole-second `Retry-After` and never read
 *   `retry-after-ms`; backoff-only clients and no-shows never honour a hint, no-shows never retry; everyone else
 *   backs off `min(0.5 * 2^n, 8)` s times a factor in (0.75, 1] (`1 - 0.25 u`);
 * - `drawClient` (src/sim/client-mix.ts): over many seeded draws each style's share is its weight's share of the
 *   mix (within 5 binomial standard deviations), a style of weight 0 is never drawn, the log-normal round trip
 *   has the documented median and p99 (the empirical CDF at each within 5 binomial standard deviations of 0.5 and
 *   0.99), `zero` means 0 ms; the default block is the documented one; one (seed, request id) is one client;
 * - `generateWorkload` (src/sim/workload.ts): ids in order, arrivals sorted and inside the traffic, each phase's
 *   count within a Poisson tolerance (5 standard deviations) of `load * capacity * duration`, none in a phase of
 *   load 0, gaps exponential and counts per second Poisson-dispersed, sizes as the scenario's distributions say
 *   (fixed exactly; log-normal integers inside [min, max] with the given median and sigma; `max_tokens` the output
 *   times `maxTokensFactor` rounded up); the same seed gives the same workload, and the arrivals do not move when
 *   the sizes change.
 *
 * Every statistical check uses fixed seeds: it either always passes or always fails.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };
/** The statistical properties draw thousands of samples per run: fewer runs. */
const STAT_PARAMS = { numRuns: Math.max(1, Math.ceil(RUNS / 8)), seed: SEED };

/** Standard deviations a statistical check allows. */
const SIGMAS = 5;
/** The standard normal quantile at 0.99. */
const Z99 = 2.3263478740408408;

// ---- the real openai-node ---------------------------------------------------------------------------------

/**
 * The CommonJS build of the installed package: its `client.js` calls `sleep_1.sleep(ms)` through the module's
 * exports object, so recording the requested sleep is a property assignment on that (same, cached) module.
 */
const requireCjs = createRequire(import.meta.url);
const SDK_DIR = path.dirname(requireCjs.resolve("openai"));
const SDK_VERSION = (JSON.parse(readFileSync(path.join(SDK_DIR, "package.json"), "utf8")) as { version: string })
  .version;

type FakeFetch = (url: string, init?: { headers?: unknown }) => Promise<Response>;
interface SdkClient {
  maxRetries: number;
  chat: { completions: { create(body: Record<string, unknown>): Promise<unknown> } };
}
interface SdkClientPrivates {
  calculateDefaultRetryTimeoutMillis(retriesRemaining: number, maxRetries: number): number;
}
type SdkClass = (new (opts: {
  apiKey: string;
  baseURL: string;
  maxRetries?: number;
  fetch: FakeFetch;
}) => SdkClient) & { RateLimitError: new (...args: never[]) => Error };

const sdkModule = requireCjs("openai") as { default: SdkClass };
const OpenAI = sdkModule.default;
const sdkSleep = requireCjs(path.join(SDK_DIR, "internal/utils/sleep.js")) as { sleep: (ms: number) => Promise<void> };

/** Never contacted: every request goes to the fake fetch. */
const UNREACHED_BASE_URL = "http://127.0.0.1:9/v1";

/** Runs `body` with Math.random returning `u` (the SDK reads it for its jitter and its log ids). */
async function withRandom<T>(u: number, body: () => Promise<T> | T): Promise<T> {
  const original = Math.random;
  Math.random = () => u;
  try {
    return await body();
  } finally {
    Math.random = original;
  }
}

/** What the real client did with a run of 429s. */
interface RealRetries {
  /** The milliseconds it asked `sleep` for, before each retry. */
  sleeps: number[];
  /** `x-stainless-retry-count` and `x-stainless-lang` of each attempt. */
  attempts: { retryCount: string | null; lang: string | null }[];
  error: unknown;
}

/** The headers of a refusal as spillway's middleware writes them (src/edge/middleware.ts: `String(value)`). */
function headersOf(refusal: RetryHeaders): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (refusal.retryAfterS !== undefined) headers["retry-after"] = String(refusal.retryAfterS);
  if (refusal.retryAfterMs !== undefined) headers["retry-after-ms"] = String(refusal.retryAfterMs);
  return headers;
}

/** Drives the real openai-node client: every attempt answered 429 with `refusals[attempt]`'s headers. */
async function realRetries(refusals: readonly RetryHeaders[], maxRetries: number, u: number): Promise<RealRetries> {
  const sleeps: number[] = [];
  const attempts: RealRetries["attempts"] = [];
  const fetch: FakeFetch = async (_url, init) => {
    const sent = new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]);
    const refusal = refusals[attempts.length] ?? {};
    attempts.push({ retryCount: sent.get("x-stainless-retry-count"), lang: sent.get("x-stainless-lang") });
    return new Response(JSON.stringify({ error: { message: "shed", type: "rate_limit_exceeded" } }), {
      status: 429,
      headers: headersOf(refusal),
    });
  };
  const client = new OpenAI({ apiKey: "x", baseURL: UNREACHED_BASE_URL, maxRetries, fetch });
  const originalSleep = sdkSleep.sleep;
  sdkSleep.sleep = async (ms) => {
    sleeps.push(ms);
  };
  try {
    const error = await withRandom(u, () =>
      client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    return { sleeps, attempts, error };
  } finally {
    sdkSleep.sleep = originalSleep;
  }
}

/** The sim's delays for the same refusals: `retryDelay` before each retry n = 0 .. maxRetries - 1. */
function modelDelays(style: ClientStyle, refusals: readonly RetryHeaders[], maxRetries: number, u: number): number[] {
  const delays: number[] = [];
  for (let n = 0; n < maxRetries; n++)
    delays.push(retryDelay(CLIENT_PROFILES[style], refusals[n] ?? {}, n, () => u).delayMs);
  return delays;
}

/** Jitter sources: Math.random's range [0, 1), its ends included. */
const uArb = fc.oneof(
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  fc.constantFrom(0, 0.5, 1 - 2 ** -53),
);

/** A positive header value: whole, decimal, tiny, huge. */
const positiveArb = fc.oneof(
  fc.integer({ min: 1, max: 300_000 }),
  fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
  fc.double({ min: Number.MIN_VALUE, max: Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0.001, 0.5, 1, 999, 1000, 1000.5, 59_999, 60_000, 60_001, 120_000, 2 ** 31 - 1, 2 ** 31, 1e21),
);
/** Any number a header could carry (read only where the other header decides). */
const anyValueArb = fc.oneof(
  positiveArb,
  fc.constantFrom(0, -0, -1, -0.5, -1e9),
  fc.double({ min: -1e9, max: 1e9, noNaN: true }),
);

/** Refusals with the headers spillway can emit: each absent or positive; after a positive `retry-after-ms`, any `Retry-After`. */
const emittedRefusalArb: fc.Arbitrary<RetryHeaders> = fc.oneof(
  fc.record({ retryAfterMs: positiveArb, retryAfterS: fc.option(anyValueArb, { nil: undefined }) }),
  fc.record({ retryAfterS: fc.option(positiveArb, { nil: undefined }) }),
  fc.constant({}),
);

/** Any refusal headers (for the styles held to their documentation, not to a package). */
const anyRefusalArb: fc.Arbitrary<RetryHeaders> = fc.record(
  {
    retryAfterMs: fc.option(anyValueArb, { nil: undefined }),
    retryAfterS: fc.option(anyValueArb, { nil: undefined }),
  },
  { requiredKeys: [] },
);

describe("openai_node against the installed openai-node package", () => {
  it("is openai-node 6.x, retrying twice by default (the scenarios' client.maxRetries)", () => {
    expect(SDK_VERSION).toMatch(/^6\./);
    const client = new OpenAI({ apiKey: "x", baseURL: UNREACHED_BASE_URL, fetch: async () => new Response("{}") });
    expect(client.maxRetries).toBe(2);
    // The style takes its retry count from the scenario, as the SDK takes it from its option.
    expect(CLIENT_PROFILES.openai_node.maxRetries).toBeUndefined();
    expect(CLIENT_PROFILES.openai_node.sendsSdkHeaders).toBe(true);
    expect(CLIENT_PROFILES.openai_node.lang).toBe("js");
  });

  it("backs off as calculateDefaultRetryTimeoutMillis does, for every retry count and jitter", async () => {
    const client = new OpenAI({
      apiKey: "x",
      baseURL: UNREACHED_BASE_URL,
      fetch: async () => new Response("{}"),
    }) as unknown as SdkClientPrivates;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 39 }),
        uArb,
        async (maxRetries, retriesDone, u) => {
          fc.pre(retriesDone < maxRetries);
          const retriesRemaining = maxRetries - retriesDone;
          const real = await withRandom(u, () =>
            client.calculateDefaultRetryTimeoutMillis(retriesRemaining, maxRetries),
          );
          expect(retryDelay(CLIENT_PROFILES.openai_node, {}, retriesDone, () => u)).toEqual({
            delayMs: real,
            hinted: false,
          });
          // Every style that falls back backs off the same way.
          for (const style of CLIENT_STYLES)
            expect(retryDelay(CLIENT_PROFILES[style], {}, retriesDone, () => u).delayMs).toBe(real);
        },
      ),
      PARAMS,
    );
  });

  it("sleeps what retryDelay says for the hints spillway emits, retrying maxRetries times with its SDK headers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 4 }),
        fc.array(emittedRefusalArb, { minLength: 5, maxLength: 5 }),
        uArb,
        async (maxRetries, refusals, u) => {
          const real = await realRetries(refusals, maxRetries, u);
          expect(real.error).toBeInstanceOf(OpenAI.RateLimitError);
          expect(real.sleeps).toEqual(modelDelays("openai_node", refusals, maxRetries, u));
          // The first attempt and maxRetries retries, each announcing the SDK and its retry count.
          expect(real.attempts).toEqual(
            Array.from({ length: maxRetries + 1 }, (_, n) => ({ retryCount: String(n), lang: "js" })),
          );
        },
      ),
      PARAMS,
    );
  });
});

// ---- the other styles, from their documentation ----------------------------------------------------------

/** The documented rules of each style: the hint it reads, and the longest it honours (ms; 0: none). */
const DOCUMENTED: Record<
  Exclude<ClientStyle, "openai_node">,
  { readsMs: boolean; honoursUpToMs: number; maxRetries?: number; sdk?: "python" }
> = {
  openai_python: { readsMs: true, honoursUpToMs: 60_000, sdk: "python" },
  legacy_sdk: { readsMs: true, honoursUpToMs: 60_000, sdk: "python" },
  headerless_hints: { readsMs: false, honoursUpToMs: Number.POSITIVE_INFINITY },
  backoff_only: { readsMs: false, honoursUpToMs: 0 },
  no_show: { readsMs: false, honoursUpToMs: 0, maxRetries: 0 },
};

function documentedDelay(style: keyof typeof DOCUMENTED, h: RetryHeaders, n: number, u: number) {
  const rules = DOCUMENTED[style];
  const hintMs =
    rules.readsMs && h.retryAfterMs !== undefined
      ? h.retryAfterMs
      : h.retryAfterS !== undefined
        ? h.retryAfterS * 1000
        : undefined;
  if (hintMs !== undefined && hintMs > 0 && hintMs <= rules.honoursUpToMs) return { delayMs: hintMs, hinted: true };
  const backoffS = Math.min(0.5 * 2 ** n, 8);
  const factor = 1 - 0.25 * u;
  return { delayMs: backoffS * factor * 1000, hinted: false };
}

describe("the other client styles (documented rules)", () => {
  it("honour exactly the hints their documentation says, else back off min(0.5 * 2^n, 8) s x (0.75, 1]", () => {
    const styles = Object.keys(DOCUMENTED) as (keyof typeof DOCUMENTED)[];
    fc.assert(
      fc.property(
        fc.constantFrom(...styles),
        anyRefusalArb,
        fc.integer({ min: 0, max: 12 }),
        uArb,
        (style, headers, n, u) => {
          const actual = retryDelay(CLIENT_PROFILES[style], headers, n, () => u);
          const expected = documentedDelay(style, headers, n, u);
          expect(actual.hinted).toBe(expected.hinted);
          expect(actual.delayMs).toBeCloseTo(expected.delayMs, 9);
          if (!actual.hinted) {
            const backoffMs = Math.min(500 * 2 ** n, 8000);
            // (0.75, 1] in reals; in doubles u = 1 - 2^-53 rounds 1 - 0.25 u to 0.75 (the SDK's own formula too).
            expect(actual.delayMs).toBeGreaterThanOrEqual(0.75 * backoffMs);
            expect(actual.delayMs).toBeLessThanOrEqual(backoffMs);
          }
        },
      ),
      PARAMS,
    );
  });

  it("retry as documented: no-shows never, the rest as the scenario says; only the SDKs send SDK headers", () => {
    for (const style of Object.keys(DOCUMENTED) as (keyof typeof DOCUMENTED)[]) {
      const profile = CLIENT_PROFILES[style];
      const rules = DOCUMENTED[style];
      expect(profile.style).toBe(style);
      expect(profile.maxRetries).toBe(rules.maxRetries);
      expect(profile.sendsSdkHeaders).toBe(rules.sdk !== undefined);
      expect(profile.lang).toBe(rules.sdk);
    }
  });
});

// ---- drawClient and the mix -------------------------------------------------------------------------------

interface Tally {
  counts: Map<ClientStyle, number>;
  belowMedian: number;
  belowP99: number;
  zeros: number;
}

function tally(config: ClientsConfig, seed: number, draws: number, from = 0): Tally {
  const counts = new Map<ClientStyle, number>();
  let belowMedian = 0;
  let belowP99 = 0;
  let zeros = 0;
  const rt = config.roundTrip;
  for (let id = from; id < from + draws; id++) {
    const client = drawClient(config, randomStream(seed, "client-kind", id));
    counts.set(client.profile.style, (counts.get(client.profile.style) ?? 0) + 1);
    expect(client.profile).toBe(CLIENT_PROFILES[client.profile.style]);
    expect(Number.isFinite(client.roundTripMs)).toBe(true);
    if (client.roundTripMs === 0) zeros += 1;
    if (rt.kind === "lognormal") {
      if (client.roundTripMs < rt.medianMs) belowMedian += 1;
      if (client.roundTripMs < rt.p99Ms) belowP99 += 1;
    }
  }
  return { counts, belowMedian, belowP99, zeros };
}

/** `count` of `n` Bernoulli(p) draws is within SIGMAS binomial standard deviations of n p (plus one draw). */
function expectBinomial(count: number, n: number, p: number, what: string): void {
  const sd = Math.sqrt(n * p * (1 - p));
  const off = Math.abs(count - n * p);
  if (!(off <= SIGMAS * sd + 1))
    throw new Error(`${what}: ${count} of ${n}, expected ${(n * p).toFixed(1)} +- ${(SIGMAS * sd + 1).toFixed(1)}`);
}

function expectMix(config: ClientsConfig, t: Tally, draws: number): void {
  const weights = CLIENT_STYLES.map((s) => [s, config.mix[s] ?? 0] as const);
  const total = weights.reduce((s, [, w]) => s + w, 0);
  for (const [style, w] of weights) {
    const count = t.counts.get(style) ?? 0;
    if (w === 0) expect(count, `${style} has no share`).toBe(0);
    else expectBinomial(count, draws, w / total, `share of ${style}`);
  }
}

function expectRoundTrip(config: ClientsConfig, t: Tally, draws: number): void {
  if (config.roundTrip.kind === "zero") {
    expect(t.zeros).toBe(draws);
    return;
  }
  expectBinomial(t.belowMedian, draws, 0.5, "round trips below the median");
  expectBinomial(t.belowP99, draws, 0.99, "round trips below the p99");
}

const mixArb = fc
  .record(
    Object.fromEntries(
      CLIENT_STYLES.map((s) => [s, fc.option(fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 5, noNaN: true })))]),
    ) as Record<ClientStyle, fc.Arbitrary<number | null>>,
  )
  .map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null)) as Record<string, number>)
  .filter((m) => Object.values(m).some((v) => v > 0));

const roundTripArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: "zero" as const }) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        medianMs: fc.double({ min: 1, max: 500, noNaN: true }),
        spread: fc.double({ min: 1.01, max: 30, noNaN: true }),
      })
      .map(({ medianMs, spread }) => ({ kind: "lognormal" as const, medianMs, p99Ms: medianMs * spread })),
  },
);

describe("the clients' round-trip settings", () => {
  it("refuses a log-normal p99 below its median (the spread would turn negative), naming the field", () => {
    const parsed = clientsSchema.safeParse({ roundTrip: { kind: "lognormal", medianMs: 80, p99Ms: 60 } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["roundTrip.p99Ms"]);
    expect(clientsSchema.safeParse({ roundTrip: { kind: "lognormal", medianMs: 80, p99Ms: 80 } }).success).toBe(true);
  });
});

describe("drawClient (statistical, fixed seeds)", () => {
  it("the default block is the documented one: node half, python, 30% without SDK headers; 80 ms / 600 ms", () => {
    const config = clientsSchema.parse(undefined);
    expect(config.mix).toEqual(DEFAULT_CLIENT_MIX);
    expect(config.roundTrip).toEqual({ kind: "lognormal", medianMs: 80, p99Ms: 600 });
    expect(config.workerToRouterMs).toBe(5);
    const shares = DEFAULT_CLIENT_MIX;
    const total = Object.values(shares).reduce((s: number, v) => s + (v ?? 0), 0);
    expect(total).toBeCloseTo(1, 12);
    expect(shares.openai_node).toBe(0.5);
    const headerless = CLIENT_STYLES.filter((s) => !CLIENT_PROFILES[s].sendsSdkHeaders).reduce(
      (s, st) => s + (shares[st] ?? 0),
      0,
    );
    expect(headerless).toBeCloseTo(0.3, 12);
  });

  it("draws the default mix in its shares, round trips with median 80 ms and p99 600 ms", () => {
    const config = clientsSchema.parse(undefined);
    const draws = 40_000;
    const t = tally(config, SEED, draws);
    expectMix(config, t, draws);
    expectRoundTrip(config, t, draws);
  });

  it("draws any mix in its weights' shares, never a style of weight 0, with the round trip's median and p99", () => {
    const draws = 4000;
    fc.assert(
      fc.property(mixArb, roundTripArb, fc.integer({ min: -1e6, max: 1e6 }), (mix, roundTrip, seed) => {
        const config = clientsSchema.parse({ mix, roundTrip, workerToRouterMs: 0 });
        const t = tally(config, seed, draws);
        expectMix(config, t, draws);
        expectRoundTrip(config, t, draws);
      }),
      STAT_PARAMS,
    );
  });

  it("is one client per (seed, request id), whatever was drawn before", () => {
    fc.assert(
      fc.property(mixArb, roundTripArb, fc.integer(), fc.integer({ min: 0, max: 1e7 }), (mix, roundTrip, seed, id) => {
        const config = clientsSchema.parse({ mix, roundTrip });
        const first = drawClient(config, randomStream(seed, "client-kind", id));
        drawClient(config, randomStream(seed, "client-kind", id + 1));
        const again = drawClient(config, randomStream(seed, "client-kind", id));
        expect(again).toEqual(first);
      }),
      PARAMS,
    );
  });
});

// ---- generateWorkload -------------------------------------------------------------------------------------

type Length = Scenario["requests"]["prompt"];

function scenarioWith(over: Record<string, unknown>): Scenario {
  return scenarioSchema.parse({
    name: "client-inputs",
    title: "client inputs",
    description: "test",
    seed: 1,
    phases: [{ durationS: 10, load: 1 }],
    tailS: 0,
    fleet: { replicas: [{ count: 1, speed: 1 }], maxOngoingRequests: 4, maxTotalTokens: 4096 },
    router: { shards: 1, maxQueuedRequests: 4, queueTimeoutS: 5 },
    requests: { prompt: { kind: "fixed", tokens: 8 }, output: { kind: "fixed", tokens: 4 } },
    client: { maxRetries: 2 },
    ...over,
  });
}

const lengthArb: fc.Arbitrary<Length> = fc.oneof(
  fc.integer({ min: 1, max: 4000 }).map((tokens) => ({ kind: "fixed" as const, tokens })),
  fc
    .record({
      median: fc.double({ min: 1, max: 2000, noNaN: true }),
      sigma: fc.double({ min: 0, max: 2, noNaN: true }),
      a: fc.integer({ min: 1, max: 3000 }),
      b: fc.integer({ min: 1, max: 3000 }),
    })
    .map(({ median, sigma, a, b }) => ({
      kind: "lognormal" as const,
      median,
      sigma,
      min: Math.min(a, b),
      max: Math.max(a, b),
    })),
);

const workloadArb = fc.record({
  seed: fc.integer(),
  capacityRps: fc.double({ min: 0.2, max: 20, noNaN: true }),
  phases: fc.array(
    fc.record({
      durationS: fc.double({ min: 0.5, max: 30, noNaN: true }),
      load: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 4, noNaN: true })),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  prompt: lengthArb,
  output: lengthArb,
  maxTokensFactor: fc.double({ min: 1, max: 3, noNaN: true }),
});

function expectLength(value: number, dist: Length, what: string): void {
  if (dist.kind === "fixed") {
    if (value !== dist.tokens) throw new Error(`${what}: ${value} != fixed ${dist.tokens}`);
    return;
  }
  if (!(Number.isInteger(value) && value >= dist.min && value <= dist.max))
    throw new Error(`${what}: ${value} outside the integers of [${dist.min}, ${dist.max}]`);
}

describe("generateWorkload", () => {
  it("sorts arrivals inside their phases, in Poisson counts of load x capacity x duration, sized as the scenario says", () => {
    fc.assert(
      fc.property(workloadArb, (w) => {
        const scenario = scenarioWith({
          seed: w.seed,
          phases: w.phases,
          requests: { prompt: w.prompt, output: w.output, maxTokensFactor: w.maxTokensFactor },
        });
        const requests = generateWorkload(scenario, w.capacityRps);
        // Phase bounds as the documented model has them: back to back from 0.
        const bounds: { startMs: number; endMs: number; expected: number; load: number }[] = [];
        let startS = 0;
        for (const p of w.phases) {
          bounds.push({
            startMs: startS * 1000,
            endMs: (startS + p.durationS) * 1000,
            expected: p.load * w.capacityRps * p.durationS,
            load: p.load,
          });
          startS += p.durationS;
        }
        const counts = bounds.map(() => 0);
        let previous = Number.NEGATIVE_INFINITY;
        requests.forEach((r, i) => {
          expect(r.id).toBe(i);
          expect(r.arrivalMs).toBeGreaterThanOrEqual(previous);
          previous = r.arrivalMs;
          const phase = bounds.findIndex((b) => r.arrivalMs >= b.startMs && r.arrivalMs < b.endMs);
          expect(phase, `arrival ${r.arrivalMs} inside the traffic`).toBeGreaterThanOrEqual(0);
          counts[phase] = (counts[phase] ?? 0) + 1;
          expectLength(r.promptTokens, w.prompt, "prompt");
          expectLength(r.outputTokens, w.output, "output");
          expect(r.maxTokens).toBe(Math.ceil(r.outputTokens * w.maxTokensFactor));
          expect(r.maxTokens).toBeGreaterThanOrEqual(r.outputTokens);
          expect(r.tenant).toBeUndefined();
        });
        bounds.forEach((b, i) => {
          const n = counts[i] ?? 0;
          if (b.load === 0) expect(n).toBe(0);
          const tolerance = SIGMAS * Math.sqrt(b.expected) + 2;
          if (!(Math.abs(n - b.expected) <= tolerance))
            throw new Error(`phase ${i}: ${n} arrivals, expected ${b.expected.toFixed(1)} +- ${tolerance.toFixed(1)}`);
        });
        // Deterministic per seed; the sizes' stream does not move the arrivals.
        expect(generateWorkload(scenario, w.capacityRps)).toEqual(requests);
        const resized = scenarioWith({
          seed: w.seed,
          phases: w.phases,
          requests: { prompt: w.output, output: { kind: "fixed", tokens: 3 } },
        });
        expect(generateWorkload(resized, w.capacityRps).map((r) => r.arrivalMs)).toEqual(
          requests.map((r) => r.arrivalMs),
        );
      }),
      { numRuns: Math.max(1, Math.ceil(RUNS / 2)), seed: SEED },
    );
  });

  it("arrives as a Poisson process: exponential gaps, counts per second dispersed as Poisson (fixed seed)", () => {
    const rate = 5;
    const seconds = 2000;
    const scenario = scenarioWith({
      seed: SEED,
      phases: [
        { durationS: seconds / 2, load: 1 },
        { durationS: seconds / 2, load: 1 },
      ],
    });
    const requests = generateWorkload(scenario, rate);
    const n = requests.length;
    expect(Math.abs(n - rate * seconds)).toBeLessThanOrEqual(SIGMAS * Math.sqrt(rate * seconds));
    // Gaps: P(gap < mean gap) = 1 - 1/e for an exponential.
    let short = 0;
    for (let i = 1; i < n; i++)
      if (
        (requests[i] as { arrivalMs: number }).arrivalMs - (requests[i - 1] as { arrivalMs: number }).arrivalMs <
        1000 / rate
      )
        short += 1;
    expectBinomial(short, n - 1, 1 - Math.exp(-1), "gaps shorter than the mean");
    // Counts per second: the index of dispersion sum((x - mean)^2) / mean is chi-square with k - 1 degrees.
    const bins = new Array<number>(seconds).fill(0);
    for (const r of requests) bins[Math.floor(r.arrivalMs / 1000)] = (bins[Math.floor(r.arrivalMs / 1000)] ?? 0) + 1;
    const mean = n / seconds;
    const dispersion = bins.reduce((s, x) => s + (x - mean) ** 2, 0) / mean / (seconds - 1);
    expect(Math.abs(dispersion - 1)).toBeLessThanOrEqual(SIGMAS * Math.sqrt(2 / (seconds - 1)));
    // Different seeds, different arrivals.
    const other = generateWorkload(scenarioWith({ seed: SEED + 1, phases: scenario.phases }), rate);
    expect(other.map((r) => r.arrivalMs)).not.toEqual(requests.map((r) => r.arrivalMs));
  });

  it("draws log-normal sizes with the scenario's median and sigma (fixed seed)", () => {
    const median = 1000;
    const sigma = 0.8;
    const scenario = scenarioWith({
      seed: SEED,
      phases: [{ durationS: 2000, load: 1 }],
      requests: {
        prompt: { kind: "lognormal", median, sigma, min: 1, max: 1_000_000 },
        output: { kind: "lognormal", median: 200, sigma: 0, min: 1, max: 10_000 },
        maxTokensFactor: 1.5,
      },
    });
    const requests = generateWorkload(scenario, 10);
    const n = requests.length;
    expect(n).toBeGreaterThan(15_000);
    // Rounding to whole tokens moves P(< median) by under f(median) ~ 5e-4: inside the tolerance.
    expectBinomial(requests.filter((r) => r.promptTokens < median).length, n, 0.5, "prompts below the median");
    const p99 = median * Math.exp(sigma * Z99);
    expectBinomial(requests.filter((r) => r.promptTokens < p99).length, n, 0.99, "prompts below the p99");
    // sigma 0: the median itself; max_tokens rounded up.
    for (const r of requests) {
      expect(r.outputTokens).toBe(200);
      expect(r.maxTokens).toBe(300);
    }
  });
});
