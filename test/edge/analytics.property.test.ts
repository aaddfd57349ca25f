import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Rejection } from "../../src/core/router-core";
import { type DecisionPoint, quotaRefusalPoint, rejectionPoint, writeDecision } from "../../src/edge/analytics";
import { replicaLabel } from "../../src/edge/replica-label";
import { propertyRuns } from "../support/property-runs";

/**
 * The edge's Workers Analytics Engine rows (src/edge/analytics.ts), for any deployment and tenant names (long,
 * multi-byte, astral, lone surrogates, empty), outcomes and numbers (NaN, ±Infinity, -0, negative, huge, absent),
 * written through a fake dataset that records each data point and then throws a TypeError where workerd's
 * `writeDataPoint` does (src/workerd/api/analytics-engine-impl.h): more than 20 blobs or doubles, more than one
 * index, an index over 96 bytes, blobs over 5120 bytes together (the documented limit is 16 KB:
 * https://developers.cloudflare.com/analytics/analytics-engine/limits/; the stricter figure is held). Bytes are
 * counted as UTF-8, as the runtime encodes the strings. Held:
 *
 * - every decision writes exactly one data point, which the dataset accepts, and nothing throws to the caller,
 *   whatever the dataset throws;
 * - the index is the deployment when it fits in 96 bytes; a longer one is cut between code points (a well-formed
 *   name gives a well-formed index), and distinct deployments keep distinct indexes;
 * - the blobs are the module's layout (deployment, outcome, reason, rung, replica, tenant), each the value
 *   itself or a prefix of it cut between code points; names that fit are never cut; the replica's value is its
 *   display form (`replicaLabel`: a URL's userinfo and query values redacted);
 * - the doubles are six numbers: 1, the delay (0 when none), queue depth, drain rate (0 when none), status, shard.
 *   Analytics Engine documents no finiteness requirement, so NaN and Infinity pass as given.
 */

const encoder = new TextEncoder();
/** A surrogate not part of a pair (with the `u` flag a pair is one code point, not two surrogates). */
const LONE_SURROGATE = /\p{Cs}/gu;
const wellFormed = (s: string) => s.match(LONE_SURROGATE) === null;
const utf8 = (s: string) => encoder.encode(s).length;

interface Point {
  indexes?: unknown[];
  blobs?: unknown[];
  doubles?: unknown[];
}

/** A dataset that records every data point it is given, then refuses it as workerd would. */
function fakeDataset(): { dataset: AnalyticsEngineDataset; tried: Point[]; accepted: Point[] } {
  const tried: Point[] = [];
  const accepted: Point[] = [];
  const dataset = {
    writeDataPoint(point?: Point) {
      const p = point ?? {};
      tried.push(p);
      const { indexes = [], blobs = [], doubles = [] } = p;
      if (doubles.length > 20) throw new TypeError("writeDataPoint(): Maximum of 20 doubles supported.");
      if (blobs.length > 20) throw new TypeError("writeDataPoint(): Maximum of 20 blobs supported.");
      let sum = 0;
      for (const blob of blobs) {
        sum += typeof blob === "string" ? utf8(blob) : 0;
        if (sum > 5120) throw new TypeError("writeDataPoint(): Cumulative size of blobs exceeds 5120 bytes).");
      }
      if (indexes.length > 1) throw new TypeError("writeDataPoint(): Maximum of 1 indexes supported.");
      if (typeof indexes[0] === "string" && utf8(indexes[0]) > 96)
        throw new TypeError("writeDataPoint(): Size of indexes[0] exceeds 96 bytes).");
      accepted.push(p);
    },
  } as AnalyticsEngineDataset;
  return { dataset, tried, accepted };
}

/** The index of the one data point written. */
function indexOfRow(points: Point[]): string {
  expect(points).toHaveLength(1);
  return (points[0]?.indexes ?? [])[0] as string;
}

/** Names: short ASCII, multi-byte and astral text, lone surrogates, around and far past 96 bytes. */
const nameUnit = fc.oneof(
  fc.constantFrom("a", "-", ".", "/", "é", "€", "日", "😀", "👩‍💻", "\ud800", "\udc00", "\u0000"),
  fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
);
const name = fc.oneof(
  fc.string({ unit: nameUnit, maxLength: 40 }),
  fc.string({ unit: nameUnit, minLength: 20, maxLength: 120 }),
  fc.string({ unit: nameUnit, minLength: 1000, maxLength: 3000 }),
  fc.constantFrom("a".repeat(96), "a".repeat(97), "é".repeat(48), `${"a".repeat(95)}😀`, "😀".repeat(24)),
);
const deployment = name.filter((n) => n.length > 0); // the config schema: z.string().min(1)
const number = fc.oneof(
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, Number.MAX_VALUE, 1e308),
);
const optionalNumber = fc.option(number, { nil: undefined });

const decision: fc.Arbitrary<DecisionPoint> = fc.record(
  {
    deployment,
    shard: number,
    outcome: fc.constantFrom("admitted" as const, "rejected" as const),
    reason: fc.oneof(fc.constantFrom("queue_full", "queue_timeout", "no_replica_available", "quota"), name),
    rung: fc.oneof(fc.constantFrom("computed", "static_fallback", "none"), name),
    replica: fc.oneof(
      fc.webUrl(),
      fc.webUrl({ authoritySettings: { withUserInfo: true }, withQueryParameters: true, withFragments: true }),
      name,
    ),
    suggestedS: fc.oneof(optionalNumber, fc.constant(null)),
    queueDepth: number,
    drainRate: fc.oneof(number, fc.constant(null)),
    status: number,
    tenant: name,
  },
  { requiredKeys: ["deployment", "shard", "outcome", "queueDepth", "drainRate", "status"] },
);

/** Fixed seed; shrinking long names is bounded so that a failure is reported within seconds. */
const runs = { ...propertyRuns(300, 20261209), interruptAfterTimeLimit: 20_000, markInterruptAsFailure: true };

/**
 * `fc.assert`, its failure re-thrown with lone surrogates replaced (names here hold them): the pool reports a
 * failure over a WebSocket, which refuses invalid UTF-8, and would otherwise crash instead of naming the input.
 */
function assertProperty<T>(property: fc.IProperty<T>, params: fc.Parameters<T>) {
  try {
    fc.assert(property, params);
  } catch (error) {
    throw new Error(String((error as Error).message).replace(LONE_SURROGATE, "\ufffd"));
  }
}

/** `cut` is `full` or a prefix of it that ends between two code points (of a well-formed string: well-formed). */
function expectCodePointPrefix(cut: string, full: string) {
  expect(full.startsWith(cut)).toBe(true);
  const next = full.charCodeAt(cut.length);
  const last = cut.charCodeAt(cut.length - 1);
  // never between the two halves of a surrogate pair
  expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false);
}

afterEach(() => vi.restoreAllMocks());

describe("Analytics Engine rows", () => {
  it("every decision writes one data point within the limits, with the module's layout", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    assertProperty(
      fc.property(decision, (point) => {
        const { dataset, tried, accepted } = fakeDataset();
        expect(() => writeDecision(dataset, point)).not.toThrow();
        expect(tried).toHaveLength(1);
        const row = tried[0] as Required<Point>;
        expect(accepted.length).toBe(1); // the dataset refused nothing

        expect(row.indexes).toHaveLength(1);
        const index = (row.indexes as string[])[0] as string;
        expect(utf8(index)).toBeLessThanOrEqual(96);
        if (utf8(point.deployment) <= 96) expect(index).toBe(point.deployment);
        else {
          const [, prefix] = /^([\s\S]*)~[0-9a-f]{8}$/.exec(index) ?? [];
          expect(prefix).toBeDefined();
          expectCodePointPrefix(prefix as string, point.deployment);
          if (wellFormed(point.deployment)) expect(wellFormed(index)).toBe(true);
        }

        const blobs = row.blobs as string[];
        const values = [
          point.deployment,
          point.outcome,
          point.reason ?? "",
          point.rung ?? "",
          replicaLabel(point.replica ?? ""),
          point.tenant ?? "",
        ];
        expect(blobs).toHaveLength(6);
        expect(blobs.reduce((sum, b) => sum + utf8(b), 0)).toBeLessThanOrEqual(5120);
        blobs.forEach((blob, i) => {
          expect(typeof blob).toBe("string");
          expectCodePointPrefix(blob, values[i] as string);
          if (utf8(values[i] as string) <= 853) expect(blob).toBe(values[i]); // what fits is never cut
        });

        const doubles = row.doubles as number[];
        expect(doubles).toHaveLength(6);
        for (const d of doubles) expect(typeof d).toBe("number");
        expect(doubles).toEqual([
          1,
          point.suggestedS ?? 0,
          point.queueDepth,
          point.drainRate ?? 0,
          point.status,
          point.shard,
        ]);
      }),
      runs,
    );
  });

  it("distinct deployments keep distinct indexes", () => {
    const longish = fc.string({ unit: nameUnit, minLength: 30, maxLength: 200 });
    assertProperty(
      fc.property(longish, name, name, (common, a, b) => {
        fc.pre(a !== b);
        const indexes = [common + a, common + b].map((d) => {
          const { dataset, tried } = fakeDataset();
          writeDecision(dataset, {
            deployment: d,
            shard: 0,
            outcome: "admitted",
            queueDepth: 0,
            drainRate: null,
            status: 200,
          });
          return indexOfRow(tried);
        });
        expect(indexes[0]).not.toBe(indexes[1]);
      }),
      runs,
    );
  });

  it("nothing a dataset throws reaches the request path, whatever the point's source", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const thrown = fc.oneof(
      fc.constant(new TypeError("writeDataPoint(): Size of indexes[0] exceeds 96 bytes).")),
      fc.string().map((m) => new Error(m)),
      fc.constantFrom(undefined, null, 0, "a string", { message: 1 }),
    );
    const record = fc.record({
      reason: fc.option(name, { nil: undefined }),
      rung: fc.option(name, { nil: undefined }),
      post_jitter_s: fc.oneof(number, fc.constant(null)),
      queue_depth: number,
      drain_rate: fc.oneof(number, fc.constant(null)),
      status: number,
      tenant: fc.option(name, { nil: undefined }),
    });
    const retryAfterMs = fc.option(fc.oneof(fc.string(), number.map(String)), { nil: undefined });
    assertProperty(
      fc.property(
        thrown,
        record,
        deployment,
        number,
        name,
        retryAfterMs,
        fc.constantFrom(400, 429),
        (error, r, d, shard, tenant, ms, status) => {
          const dataset = {
            writeDataPoint() {
              throw error;
            },
          } as unknown as AnalyticsEngineDataset;
          const headers: Record<string, string> = ms === undefined ? {} : { "retry-after-ms": ms };
          expect(() => {
            writeDecision(dataset, rejectionPoint({ record: r } as unknown as Rejection, d, shard));
            writeDecision(dataset, quotaRefusalPoint(new Response(null, { status, headers }), d, tenant));
            writeDecision(undefined, rejectionPoint({ record: r } as unknown as Rejection, d, shard));
          }).not.toThrow();
        },
      ),
      { ...runs, numRuns: 150 },
    );
    expect(logged).toHaveBeenCalled();
  });
});

describe("Analytics Engine rows: examples", () => {
  it("a deployment named with more than 96 bytes is still written (the index's limit), its name in blob1", () => {
    const { dataset, accepted } = fakeDataset();
    const long = `meta-llama/${"Llama-3.1-405B-Instruct-".repeat(4)}é😀`; // 110 bytes
    writeDecision(dataset, {
      deployment: long,
      shard: 0,
      outcome: "admitted",
      queueDepth: 0,
      drainRate: null,
      status: 200,
    });
    expect(accepted).toHaveLength(1);
    const index = indexOfRow(accepted);
    expect(utf8(index)).toBeLessThanOrEqual(96);
    expect(index.startsWith("meta-llama/Llama-3.1-405B")).toBe(true);
    expect((accepted[0]?.blobs ?? [])[0]).toBe(long);
  });

  it("an astral character at the 96-byte boundary is dropped whole, not split", () => {
    const { dataset, accepted } = fakeDataset();
    const name = `${"a".repeat(85)}😀${"b".repeat(20)}`; // the emoji spans bytes 86..89 of the 87 kept
    writeDecision(dataset, {
      deployment: name,
      shard: 0,
      outcome: "admitted",
      queueDepth: 0,
      drainRate: null,
      status: 200,
    });
    const index = indexOfRow(accepted);
    expect(index).toMatch(/^a{85}~[0-9a-f]{8}$/);
  });

  it("a replica URL and deployment of kilobytes are cut, the row kept within 5120 blob bytes", () => {
    const { dataset, accepted } = fakeDataset();
    writeDecision(dataset, {
      deployment: "日".repeat(2000),
      shard: 3,
      outcome: "admitted",
      replica: `https://replica.example/${"x".repeat(6000)}`,
      queueDepth: 1,
      drainRate: null,
      status: 200,
      tenant: "acme",
    });
    expect(accepted).toHaveLength(1);
    const blobs = (accepted[0]?.blobs ?? []) as string[];
    expect(blobs.reduce((sum, b) => sum + utf8(b), 0)).toBeLessThanOrEqual(5120);
    expect(blobs.slice(1)).toEqual(["admitted", "", "", blobs[4], "acme"]);
    expect(blobs[0]).toBe("日".repeat(284)); // 852 of the 853 bytes: a character is never split
  });

  // Before: blob5 was the URL as configured, the gateway's key and the user's password in every admitted row.
  it("a replica URL's credentials never reach a row: blob5 is its URL with them redacted", () => {
    const { dataset, accepted } = fakeDataset();
    writeDecision(dataset, {
      deployment: "llama",
      shard: 0,
      outcome: "admitted",
      replica: "http://gw:pw-row@127.0.0.1:8001/r/x?key=sk-row",
      queueDepth: 0,
      drainRate: null,
      status: 200,
    });
    expect(accepted[0]?.blobs?.[4]).toBe("http://127.0.0.1:8001/r/x?key=redacted");
    expect(JSON.stringify(accepted)).not.toMatch(/pw-row|sk-row/);
  });
});
