import fc from "fast-check";
import { Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { HistogramSnapshot } from "../../../src/core/drain-accuracy";
import type { QueueLengthEntry } from "../../../src/core/queue-length-cache";
import { OTHER_TENANTS, type TenantCount, topTenants } from "../../../src/core/tenant-counters";
import { prometheusText } from "../../../src/edge/prometheus";
import { PrometheusTextError, type PromSample, parsePrometheusText } from "../../../src/edge/prometheus-text";
import type { ShardStats } from "../../../src/edge/router-protocol";
import type { TenantQuotaStats } from "../../../src/edge/tenant-quota-stats";
import { escapeLabelValue as escapeLabel, spellValue as spell } from "../../support/prometheus-spelling";
import { propertyRuns } from "../../support/property-runs";

/**
 * The Prometheus text format (0.0.4, https://prometheus.io/docs/instrumenting/exposition_formats/) on both sides of
 * the edge: the page `/spillway/metrics` serves (`prometheusText`) and the reader of engines' pages
 * (`parsePrometheusText`).
 *
 * `prometheusText`, for arbitrary shards and quotas (deployment, tenant and replica names of any Unicode, with `"`,
 * `\`, line feeds and the format's own punctuation; every number any double, NaN, ±Inf, -0 and subnormals included;
 * ledgers and nullable gauges present or not; histograms with arbitrary ascending bounds), is read back with a strict
 * parser written here from the format's rules, which holds that:
 * - the page ends with a line feed; each line is `# HELP name doc` (doc escaping only `\\` and `\n`), `# TYPE name
 *   type` or one sample `name{label="value",...} value`, with valid metric and label names, label values escaping
 *   exactly backslash, double quote and line feed, and values in Go's float syntax;
 * - each family has one HELP and one TYPE line, both before its samples, and its lines form one group; every sample
 *   belongs to a declared family (`_bucket`, `_sum` and `_count` to a histogram); no series appears twice;
 * - each histogram series has `le` strictly ascending to `+Inf`, cumulative counts, and `+Inf` equal to `_count`;
 * - the samples read are exactly those the shards and quotas put in (a model of the documented families; -0 reads
 *   as 0), and the repository's own reader and prom-client's writer (a second oracle, for every finite sample) agree.
 *
 * `parsePrometheusText`, for pages written here from arbitrary samples (any metric and label names the format
 * allows, label values of any Unicode, every double in several spellings, timestamps, comments, HELP/TYPE lines,
 * blank lines and blanks around labels, values and timestamps), returns exactly those samples; every page cut off
 * mid-line is refused with `PrometheusTextError`, never read as fewer samples. The same holds for the other
 * spacings the format allows (blanks between the name and `{`, none between `}` and the value) and for label names
 * that are also JavaScript's (`__proto__`, `constructor`): none is dropped, a repeated one is refused.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);

// ---------------------------------------------------------------------------------------------------------------
// An independent reader of the format, from its rules (and Go's expfmt where the text leaves a detail open).

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Go's ParseFloat, as exporters use it: decimal floats, and NaN / Inf with any case and sign. */
const GO_FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function goFloat(text: string): number {
  if (/^[+-]?nan$/i.test(text)) return Number.NaN;
  if (/^[+]?inf(?:inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(?:inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!GO_FLOAT.test(text)) throw new Error(`not a float: ${JSON.stringify(text)}`);
  return Number(text);
}

interface ReadSample {
  name: string;
  /** In the order written. */
  labels: [string, string][];
  value: number;
  line: string;
}

interface Page {
  samples: ReadSample[];
  types: Map<string, string>;
  helps: Map<string, string>;
}

const isBlank = (c: string | undefined) => c === " " || c === "\t";

/** One sample line; throws on anything the format does not allow. */
function readSampleLine(line: string): ReadSample {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${i} in ${JSON.stringify(line)}`);
  };
  const skip = () => {
    while (isBlank(line[i])) i++;
  };
  const take = (pattern: RegExp): string => {
    const m = pattern.exec(line.slice(i));
    if (!m) fail(`expected ${pattern}`);
    i += (m as RegExpExecArray)[0].length;
    return (m as RegExpExecArray)[0];
  };
  skip();
  const name = take(/^[a-zA-Z_:][a-zA-Z0-9_:]*/);
  skip();
  const labels: [string, string][] = [];
  const braced = line[i] === "{";
  if (braced) {
    i++;
    for (;;) {
      skip();
      if (line[i] === "}") break;
      const label = take(/^[a-zA-Z_][a-zA-Z0-9_]*/);
      if (label === "__name__") fail("reserved label name");
      if (labels.some(([l]) => l === label)) fail(`label ${label} repeated`);
      skip();
      if (line[i++] !== "=") fail("expected =");
      skip();
      if (line[i++] !== '"') fail('expected "');
      let value = "";
      for (;;) {
        const c = line[i++];
        if (c === undefined) fail("unterminated label value");
        if (c === '"') break;
        if (c === "\\") {
          const e = line[i++];
          if (e === "\\") value += "\\";
          else if (e === '"') value += '"';
          else if (e === "n") value += "\n";
          else fail("bad escape");
        } else value += c;
      }
      labels.push([label, value]);
      skip();
      if (line[i] === ",") i++;
      else if (line[i] !== "}") fail("expected , or }");
    }
    i++;
  }
  const rest = line.slice(i);
  if (!braced && !isBlank(rest[0])) fail("expected a blank before the value");
  const fields = rest.split(/[ \t]+/).filter((f) => f !== "");
  if (fields.length < 1 || fields.length > 2) fail("expected a value and an optional timestamp");
  if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) fail("bad timestamp");
  return { name, labels, value: goFloat(fields[0] as string), line };
}

/** A page, checked for the format's rules on lines and families. */
function readPage(text: string): Page {
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("no final line feed");
  const page: Page = { samples: [], types: new Map(), helps: new Map() };
  const familyOf = (name: string): string => {
    if (page.types.has(name)) return name;
    const m = /^(.*)_(bucket|sum|count)$/.exec(name);
    if (m && page.types.get(m[1] as string) === "histogram") return m[1] as string;
    throw new Error(`sample ${name} before (or without) its TYPE line`);
  };
  const closed = new Set<string>();
  const withSamples = new Set<string>();
  let current: string | undefined;
  const enter = (family: string) => {
    if (family === current) return;
    if (closed.has(family)) throw new Error(`family ${family} split into several groups`);
    if (current !== undefined) closed.add(current);
    current = family;
  };
  for (const line of text.split("\n").slice(0, -1)) {
    if (line.trim() === "") continue;
    const meta = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/s.exec(line);
    if (meta) {
      const [, keyword, name, rest = ""] = meta as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in ${line}`);
      enter(name);
      if (withSamples.has(name)) throw new Error(`${keyword} of ${name} after its samples`);
      if (keyword === "HELP") {
        if (page.helps.has(name)) throw new Error(`second HELP for ${name}`);
        if (/\\(?![\\n])/.test(rest.replace(/\\\\/g, ""))) throw new Error(`bad escape in HELP ${line}`);
        page.helps.set(
          name,
          rest.replace(/\\(\\|n)/g, (_, e: string) => (e === "n" ? "\n" : "\\")),
        );
      } else {
        if (page.types.has(name)) throw new Error(`second TYPE for ${name}`);
        if (!TYPES.has(rest)) throw new Error(`bad type in ${line}`);
        page.types.set(name, rest);
      }
      continue;
    }
    if (line.trimStart().startsWith("#")) continue;
    const sample = readSampleLine(line);
    const family = familyOf(sample.name);
    enter(family);
    withSamples.add(family);
    const type = page.types.get(family);
    if (type !== "histogram" && sample.name !== family) throw new Error(`${sample.name} in ${type} ${family}`);
    if (type === "histogram") {
      const hasLe = sample.labels.some(([l]) => l === "le");
      if (hasLe !== sample.name.endsWith("_bucket")) throw new Error(`le on ${sample.name}: ${line}`);
    }
    page.samples.push(sample);
  }
  return page;
}

/** A series' identity: its name and labels in a fixed order (`le` as the number it names). */
function seriesKey(name: string, labels: Record<string, string>): string {
  const entries = Object.entries(labels)
    .map(([k, v]): [string, string] => [k, k === "le" ? String(goFloat(v)) : v])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([name, entries]);
}

// ---------------------------------------------------------------------------------------------------------------
// The model: the samples the documented families hold for given shards and quotas.

interface Expected {
  name: string;
  labels: Record<string, string>;
  value: number;
}

type Family = "gauge" | "counter" | "histogram";

function model(shards: ShardStats[], quotas: Record<string, TenantQuotaStats>) {
  const samples: Expected[] = [];
  const types = new Map<string, Family>();
  const family = (name: string, type: Family) => types.set(name, type);
  const add = (name: string, labels: Record<string, string>, value: number) => samples.push({ name, labels, value });
  const perShard = (name: string, type: Family, value: (s: ShardStats) => number | null) => {
    family(name, type);
    for (const s of shards) {
      const v = value(s);
      if (v !== null) add(name, id(s), v);
    }
  };
  const id = (s: ShardStats) => ({ deployment: s.deployment, shard: String(s.shard) });
  perShard("spillway_queue_depth", "gauge", (s) => s.queueDepth);
  perShard("spillway_max_queued_requests", "gauge", (s) => s.maxQueuedRequests);
  perShard("spillway_drain_rate", "gauge", (s) => s.drainRate);
  perShard("spillway_estimator_warm", "gauge", (s) => (s.estimatorWarm ? 1 : 0));
  perShard("spillway_active_leases", "gauge", (s) => s.activeLeases);
  perShard("spillway_backoff_streak", "gauge", (s) => s.backoffStreak);
  perShard("spillway_admitted_total", "counter", (s) => s.admitted);
  perShard("spillway_completed_total", "counter", (s) => s.completed);
  perShard("spillway_drained_total", "counter", (s) => s.drainCount);
  perShard("spillway_router_acquire_calls_total", "counter", (s) => s.calls.acquire);
  perShard("spillway_router_release_calls_total", "counter", (s) => s.calls.releaseCalls);
  perShard("spillway_router_slots_handed_off_total", "counter", (s) => s.calls.handedOff);
  perShard("spillway_router_slots_released_total", "counter", (s) => s.calls.slotsReleased);
  perShard("spillway_demoted_total", "counter", (s) => s.demoted);
  perShard("spillway_outstanding_bookings", "gauge", (s) => s.outstandingBookings);
  perShard("spillway_promises_made_total", "counter", (s) => (s.ledger ? s.ledger.promises.made : null));
  perShard("spillway_booking_trust", "gauge", (s) => s.ledger?.trust ?? null);
  perShard("spillway_booking_show_rate", "gauge", (s) => s.ledger?.showRate ?? null);
  perShard("spillway_booking_fresh_baseline", "gauge", (s) => s.ledger?.freshBaseline ?? null);
  family("spillway_rejections_total", "counter");
  family("spillway_rejections_by_reason_total", "counter");
  family("spillway_hinted_retries_total", "counter");
  family("spillway_promises_ended_total", "counter");
  family("spillway_tenant_admitted_total", "counter");
  family("spillway_tenant_shed_total", "counter");
  family("spillway_replica_queue_length", "gauge");
  family("spillway_replica_up", "gauge");
  for (const s of shards) {
    for (const [rung, n] of Object.entries(s.rejections)) add("spillway_rejections_total", { ...id(s), rung }, n);
    for (const [reason, n] of Object.entries(s.rejectionsByReason))
      add("spillway_rejections_by_reason_total", { ...id(s), reason }, n);
    for (const [outcome, byTiming] of Object.entries(s.hintedRetries))
      for (const [timing, n] of Object.entries(byTiming))
        add("spillway_hinted_retries_total", { ...id(s), outcome, timing }, n);
    if (s.ledger) {
      const p = s.ledger.promises;
      for (const [outcome, n] of [
        ["kept", p.kept],
        ["broken", p.broken],
        ["no_show", p.noShow],
      ] as const)
        add("spillway_promises_ended_total", { ...id(s), outcome }, n);
    }
    // The top tenants and `other` are topTenants' (tested on its own); here, that each is written as given.
    for (const [tenant, c] of Object.entries(topTenants(s.tenants, 10))) {
      add("spillway_tenant_admitted_total", { ...id(s), tenant }, c.admitted);
      add("spillway_tenant_shed_total", { ...id(s), tenant, reason: "capacity" }, c.shed);
    }
    for (const [replica, entry] of Object.entries(s.replicas)) {
      if (!entry) continue;
      add("spillway_replica_queue_length", { ...id(s), replica }, entry.queueLength);
      add("spillway_replica_up", { ...id(s), replica }, entry.valid ? 1 : 0);
    }
  }
  const histogram = (name: string, of: (s: ShardStats) => HistogramSnapshot) => {
    family(name, "histogram");
    for (const s of shards) {
      const h = of(s);
      let cumulative = 0;
      for (const b of h.buckets) {
        cumulative += b.count;
        add(`${name}_bucket`, { ...id(s), le: String(b.le) }, cumulative);
      }
      add(`${name}_sum`, id(s), h.sum);
      add(`${name}_count`, id(s), h.count);
    }
  };
  histogram("spillway_suggested_delay_seconds", (s) => ({
    buckets: s.suggestedDelayBuckets,
    sum: s.suggestedDelaySumS,
    count: s.suggestedDelayBuckets.reduce((n, b) => n + b.count, 0),
  }));
  histogram("spillway_drain_time_error_seconds", (s) => s.drainTimeError);
  const perTenant = (name: string, value: (q: TenantQuotaStats) => number) => {
    family(name, "counter");
    for (const [tenant, q] of Object.entries(quotas)) add(name, { tenant }, value(q));
  };
  perTenant("spillway_tenant_quota_refused_total", (q) => q.refused);
  perTenant("spillway_tenant_tokens_charged_total", (q) => q.tokensCharged);
  perTenant("spillway_tenant_tokens_refunded_total", (q) => q.tokensRefunded);
  return { samples, types };
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries.

/** Characters that break naive writers and readers, and any code point. */
const tricky = fc.constantFrom(
  '"',
  "\\",
  "\n",
  "\r",
  "\t",
  " ",
  "{",
  "}",
  ",",
  "=",
  "#",
  "\\n",
  '\\"',
  "\u0000",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\ufeff",
  "é",
  "😀",
);
const anyText = fc.string({
  unit: fc.oneof(tricky, fc.string({ unit: "binary", minLength: 1, maxLength: 1 })),
  maxLength: 10,
});

const anyNumber = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 1_000_000 }) },
  { weight: 3, arbitrary: fc.double() },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      0,
      -0,
      0.1,
      -2.5,
      1e21,
      1e-7,
      5e-324,
      Number.MAX_VALUE,
      Number.MAX_SAFE_INTEGER,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ),
  },
);

/** Strictly ascending finite bounds, then +Inf; counts per bucket. */
const histogramBuckets = fc
  .tuple(
    fc.uniqueArray(fc.double({ noNaN: true, noDefaultInfinity: true }), { comparator: "SameValueZero", maxLength: 5 }),
    fc.array(fc.nat({ max: 1_000_000 }), { minLength: 6, maxLength: 6 }),
  )
  .map(([bounds, counts]) =>
    [...bounds.sort((a, b) => a - b), Number.POSITIVE_INFINITY].map((le, i) => ({ le, count: counts[i] ?? 0 })),
  );

const histogramSnapshot: fc.Arbitrary<HistogramSnapshot> = fc
  .tuple(histogramBuckets, anyNumber)
  .map(([buckets, sum]) => ({ buckets, sum, count: buckets.reduce((n, b) => n + b.count, 0) }));

const replicaEntry: fc.Arbitrary<QueueLengthEntry> = fc.record({
  queueLength: anyNumber,
  reportedAtMs: fc.nat(),
  valid: fc.boolean(),
  unreachable: fc.boolean(),
});

const tenantName = fc.oneof(anyText, fc.constantFrom(OTHER_TENANTS, "__proto__", "constructor"));

const shardStats = (deployment: string, shard: number): fc.Arbitrary<ShardStats> =>
  fc
    .record({
      queueDepth: anyNumber,
      maxQueuedRequests: anyNumber,
      drainRate: fc.option(anyNumber, { nil: null }),
      estimatorWarm: fc.boolean(),
      drainCount: anyNumber,
      backoffStreak: anyNumber,
      activeLeases: anyNumber,
      admitted: anyNumber,
      completed: anyNumber,
      rejections: fc.record({ computed: anyNumber, static_fallback: anyNumber, none: anyNumber }),
      rejectionsByReason: fc.record({
        queue_full: anyNumber,
        queue_timeout: anyNumber,
        no_replica_available: anyNumber,
      }),
      suggestedDelayBuckets: histogramBuckets,
      suggestedDelaySumS: anyNumber,
      drainTimeError: histogramSnapshot,
      replicas: fc.dictionary(anyText, fc.option(replicaEntry, { nil: null }), { maxKeys: 3 }),
      tenants: fc.dictionary(tenantName, fc.record({ admitted: anyNumber, shed: anyNumber }), {
        maxKeys: 13,
      }) as fc.Arbitrary<Record<string, TenantCount>>,
      hintedRetries: fc.record({
        admitted: fc.record({ early: anyNumber, on_time: anyNumber, late: anyNumber }),
        refused: fc.record({ early: anyNumber, on_time: anyNumber, late: anyNumber }),
      }),
      outstandingBookings: anyNumber,
      ledger: fc.option(
        fc.record({
          promises: fc.record({ made: anyNumber, kept: anyNumber, broken: anyNumber, noShow: anyNumber }),
          trust: anyNumber,
          showRate: anyNumber,
          freshBaseline: fc.option(anyNumber, { nil: null }),
        }),
        { nil: null },
      ),
      demoted: anyNumber,
      calls: fc.record({ acquire: anyNumber, releaseCalls: anyNumber, slotsReleased: anyNumber, handedOff: anyNumber }),
    })
    .map((s) => ({
      ...s,
      deployment,
      shard,
      recentObservations: [],
      pendingObservations: 0,
      internal: { waiters: 0, recentlyCancelled: 0, pendingObservations: 0 },
    }));

const shards = fc
  .uniqueArray(fc.tuple(fc.oneof(anyText, fc.constant("llama")), fc.nat({ max: 3 })), {
    selector: ([d, s]) => JSON.stringify([d, s]),
    maxLength: 3,
  })
  .chain((ids) => fc.tuple(...ids.map(([d, s]) => shardStats(d, s))));

const quotas: fc.Arbitrary<Record<string, TenantQuotaStats>> = fc.dictionary(
  tenantName,
  fc.record({ admitted: anyNumber, refused: anyNumber, tokensCharged: anyNumber, tokensRefunded: anyNumber }),
  { maxKeys: 4 },
);

/** The format does not tell -0 from 0 (and a writer may print either as "0"). */
const plain = (v: number) => (Object.is(v, -0) ? 0 : v);

function sameNumber(a: number, b: number): boolean {
  return Object.is(plain(a), plain(b));
}

/** The samples as a map from series to value (a series written twice is a failure of its own). */
function bySeries(samples: { name: string; labels: Record<string, string>; value: number }[]): Map<string, number> {
  const out = new Map<string, number>();
  const twice: string[] = [];
  for (const s of samples) {
    const key = seriesKey(s.name, s.labels);
    if (out.has(key)) twice.push(key);
    out.set(key, s.value);
  }
  expect(twice, "series written twice").toEqual([]);
  return out;
}

/** The differences between two pages' samples (none expected), checked at once: an `expect` per sample is slow. */
function expectSameSamples(actual: Map<string, number>, expected: Map<string, number>) {
  const differences: string[] = [];
  for (const [key, value] of expected) {
    if (!actual.has(key)) differences.push(`missing ${key}`);
    else if (!sameNumber(actual.get(key) as number, value)) differences.push(`${key}: ${actual.get(key)} != ${value}`);
  }
  for (const key of actual.keys()) if (!expected.has(key)) differences.push(`unexpected ${key}`);
  expect(differences).toEqual([]);
}

/** prom-client's lines for the same samples (finite values: it spells NaN "Nan"). */
async function promClientLines(samples: ReadSample[]): Promise<string[]> {
  const registry = new Registry();
  const labelNames = new Map<string, Set<string>>();
  for (const s of samples) {
    const names = labelNames.get(s.name) ?? new Set<string>();
    for (const [l] of s.labels) names.add(l);
    labelNames.set(s.name, names);
  }
  const gauges = new Map<string, Gauge>();
  for (const [name, names] of labelNames)
    gauges.set(name, new Gauge({ name, help: "h", labelNames: [...names], registers: [registry] }));
  for (const s of samples) (gauges.get(s.name) as Gauge).set(Object.fromEntries(s.labels), s.value);
  return (await registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}

describe("prometheusText (the page of /spillway/metrics)", () => {
  it("follows the exposition format and reads back as exactly the samples put in", async () => {
    await fc.assert(
      fc.asyncProperty(shards, quotas, async (shardList, quotaStats) => {
        const text = prometheusText(shardList, quotaStats);
        const page = readPage(text);
        const { samples, types } = model(shardList, quotaStats);

        // Families: each declared with its type and a HELP line; none the model does not know.
        expect(new Map(page.types)).toEqual(new Map(types));
        expect([...page.helps.keys()].sort()).toEqual([...types.keys()].sort());

        // Round trip: exactly the samples put in.
        const read = bySeries(
          page.samples.map((s) => ({ name: s.name, labels: Object.fromEntries(s.labels), value: s.value })),
        );
        expectSameSamples(read, bySeries(samples));

        // Histograms: per series, le strictly ascending to +Inf, cumulative counts, +Inf equal to _count.
        for (const [name, type] of page.types) {
          if (type !== "histogram") continue;
          const series = new Map<string, { le: number; value: number }[]>();
          for (const s of page.samples.filter((x) => x.name === `${name}_bucket`)) {
            const key = seriesKey("", Object.fromEntries(s.labels.filter(([l]) => l !== "le")));
            const le = goFloat(s.labels.find(([l]) => l === "le")?.[1] as string);
            series.set(key, [...(series.get(key) ?? []), { le, value: s.value }]);
          }
          for (const s of page.samples.filter((x) => x.name === `${name}_count`)) {
            const key = seriesKey("", Object.fromEntries(s.labels));
            const buckets = series.get(key) ?? [];
            expect(buckets.at(-1)?.le, `${name} ${s.line}: +Inf bucket last`).toBe(Number.POSITIVE_INFINITY);
            for (let i = 1; i < buckets.length; i++) {
              const [a, b] = [buckets[i - 1], buckets[i]] as [
                { le: number; value: number },
                { le: number; value: number },
              ];
              if (!(a.le < b.le)) expect.fail(`${name}: le ${a.le} then ${b.le}`);
              if (!(a.value <= b.value)) expect.fail(`${name}: bucket counts ${a.value} then ${b.value}`);
            }
            expect(buckets.at(-1)?.value).toBe(s.value);
            series.delete(key);
          }
          expect([...series.keys()], `${name}: buckets without _count`).toEqual([]);
        }

        // The repository's own reader agrees.
        const own = parsePrometheusText(text);
        expectSameSamples(bySeries(own), read);

        // prom-client writes the same lines for the same samples (its escaping and number spelling).
        const finite = page.samples.filter((s) => !Number.isNaN(s.value));
        expect((await promClientLines(finite)).sort()).toEqual(finite.map((s) => s.line).sort());
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 120_000); // RUNS=3000 takes some 20 s
});

// ---------------------------------------------------------------------------------------------------------------
// parsePrometheusText on pages written here.

interface Written {
  name: string;
  labels: [string, string][];
  value: number;
  timestampMs?: number;
  /** How it is spelled (all spellings Go's ParseFloat reads as the same double). */
  spelling: number;
  /** Blanks where the format allows them (and the reader claims to). */
  pad: { lead: string; inner: string; beforeValue: string; beforeTimestamp: string; trailingComma: boolean };
}

const blanks = (min: number) => fc.string({ unit: fc.constantFrom(" ", "\t"), minLength: min, maxLength: 3 });

const labelName = fc.oneof(
  fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,8}$/),
  fc.constantFrom("le", "quantile", "constructor", "toString", "hasOwnProperty"),
);

const written = (names: fc.Arbitrary<string>): fc.Arbitrary<Written> =>
  fc.record(
    {
      name: fc.oneof(fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,10}$/), fc.constant("vllm:num_requests_running")),
      labels: fc.uniqueArray(fc.tuple(names, anyText), { selector: ([l]) => l, maxLength: 4 }),
      value: anyNumber,
      timestampMs: fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
      spelling: fc.nat({ max: 5 }),
      pad: fc.record({
        lead: blanks(0),
        inner: blanks(0),
        beforeValue: blanks(1),
        beforeTimestamp: blanks(1),
        trailingComma: fc.boolean(),
      }),
    },
    { requiredKeys: ["name", "labels", "value", "spelling", "pad"] },
  );

function writeSample(s: Written, layout: (s: Written) => { afterName: string; beforeValue: string }): string {
  const { lead, inner, beforeTimestamp, trailingComma } = s.pad;
  const { afterName, beforeValue } = layout(s);
  const labels =
    s.labels.length === 0 && afterName === ""
      ? ""
      : `${afterName}{${inner}${s.labels.map(([l, v]) => `${l}${inner}=${inner}"${escapeLabel(v)}"`).join(`${inner},${inner}`)}${trailingComma && s.labels.length > 0 ? "," : ""}${inner}}`;
  const timestamp = s.timestampMs === undefined ? "" : `${beforeTimestamp}${s.timestampMs}`;
  return `${lead}${s.name}${labels}${beforeValue}${spell(s.value, s.spelling)}${timestamp}`;
}

type Other = { kind: "help" | "type" | "comment" | "blank"; text: string };
const otherLine: fc.Arbitrary<Other> = fc.oneof(
  fc.record({ kind: fc.constant("help" as const), text: anyText }),
  fc.record({ kind: fc.constant("type" as const), text: fc.constantFrom("counter", "gauge", "histogram", "untyped") }),
  fc.record({ kind: fc.constant("comment" as const), text: anyText }),
  fc.record({ kind: fc.constant("blank" as const), text: blanks(0) }),
);

function writeOther(o: Other, name: string): string {
  if (o.kind === "help") return `# HELP ${name} ${o.text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`;
  if (o.kind === "type") return `# TYPE ${name} ${o.text}`;
  if (o.kind === "comment") return `#${o.text.replace(/\n/g, " ")}`;
  return o.text;
}

const pageOf = (names: fc.Arbitrary<string>) =>
  fc.array(fc.tuple(written(names), fc.array(otherLine, { maxLength: 2 })), { maxLength: 8 });

function writePage(
  entries: [Written, Other[]][],
  layout: (s: Written) => { afterName: string; beforeValue: string },
): string {
  return entries
    .map(([s, others]) => [...others.map((o) => writeOther(o, s.name)), writeSample(s, layout)].join("\n"))
    .join("\n")
    .concat(entries.length > 0 ? "\n" : "");
}

function expectParsed(got: PromSample[], entries: [Written, Other[]][]) {
  expect(got.length).toBe(entries.length);
  entries.forEach(([s], i) => {
    const g = got[i] as PromSample;
    expect(g.name).toBe(s.name);
    expect(Object.entries(g.labels)).toEqual(s.labels);
    expect(Object.is(g.value, s.value), `${g.value} read for ${s.value} (${spell(s.value, s.spelling)})`).toBe(true);
    expect(g.timestampMs).toBe(s.timestampMs);
  });
}

/** The canonical layout: name, labels, one or more blanks, the value. */
const canonical = (s: Written) => ({ afterName: "", beforeValue: s.pad.beforeValue });

describe("parsePrometheusText (engines' pages)", () => {
  it("reads every sample of a well-formed page exactly, and refuses the page cut off anywhere mid-line", () => {
    fc.assert(
      fc.property(pageOf(labelName), fc.nat(), (entries, cut) => {
        const text = writePage(entries, canonical);
        expectParsed(parsePrometheusText(text), entries);
        if (text.length > 0) {
          const at = cut % text.length;
          const prefix = text.slice(0, at);
          if (prefix.length > 0 && !prefix.endsWith("\n"))
            expect(() => parsePrometheusText(prefix)).toThrow(PrometheusTextError);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  // "Within a line, tokens can be separated by any number of blanks and/or tabs (and must be separated by at least
  // one if they would otherwise merge with the previous token)": the label set may follow the name after blanks,
  // and the value may follow `}` with none (Go's expfmt reads both).
  it("reads blanks between the metric name and `{`", () => {
    fc.assert(
      fc.property(pageOf(labelName), (entries) => {
        const layout = (s: Written) => ({ afterName: s.pad.beforeValue, beforeValue: s.pad.beforeValue });
        expectParsed(parsePrometheusText(writePage(entries, layout)), entries);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("reads a value right after `}`", () => {
    fc.assert(
      fc.property(pageOf(labelName), (entries) => {
        const layout = (s: Written) => ({ afterName: "", beforeValue: s.labels.length > 0 ? "" : s.pad.beforeValue });
        expectParsed(parsePrometheusText(writePage(entries, layout)), entries);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("keeps every label whatever its name, `__proto__` included", () => {
    // Label names starting with `__` are reserved to Prometheus (only `__name__` is refused by its reader), but a
    // page may carry them: a reader must not drop one, nor miss it repeated.
    const reserved = fc.oneof(labelName, fc.constantFrom("__proto__", "__name2__"));
    fc.assert(
      fc.property(pageOf(reserved), (entries) => {
        expectParsed(parsePrometheusText(writePage(entries, canonical)), entries);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(() => parsePrometheusText('a{__proto__="x",__proto__="y"} 1\n')).toThrow(PrometheusTextError);
  });
});
