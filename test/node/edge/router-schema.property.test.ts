import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import type { RouterOptions } from "../../../src/core/router-options";
import { routerOptionsFromSettings, routerSettingsSchema } from "../../../src/core/router-schema";
import { propertyRuns } from "../../support/property-runs";

/**
 * A router's settings as a deployment writes them (src/core/router-schema.ts, the one source of router defaults for
 * the edge and the simulator) and what reaches the core (`routerOptionsFromSettings`). Held, for any subset of the
 * settings written with any values in their documented ranges:
 *
 * - the settings parse, and parsing is idempotent (the parsed settings parse to themselves);
 * - every setting reaches the core's options with the meaning it was written with: seconds become milliseconds
 *   where the core counts in them, `null` ("off") becomes absent, and 0 or `false` for a share, a headroom or a
 *   flag the core reads as off when absent; an unwritten setting has its default's meaning;
 * - a value just past its range, or of the wrong type, is refused with a ZodError whose path names the setting.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261206);

type Booking = NonNullable<RouterOptions["booking"]>;

/** One setting: where it is written, values in its range, values out of it, and what the core makes of it. */
interface Setting {
  path: string;
  valid: fc.Arbitrary<unknown>;
  invalid: unknown[];
  /** The setting's meaning as the core reads its options (absent read as the core reads it). */
  effective: (o: RouterOptions) => unknown;
  /** What a written value should mean there (default: itself). */
  meaning?: (v: unknown) => unknown;
}

const num = (min: number, max: number, { gt = false } = {}) =>
  fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter((v) => !gt || v > min);
const nullable = (a: fc.Arbitrary<unknown>) => fc.option(a, { nil: null });
const booking = (o: RouterOptions) => o.booking as Booking;
const ms = (v: unknown) => (v as number) * 1000;

const SETTINGS: Setting[] = [
  {
    path: "maxOngoingRequests",
    valid: fc.integer({ min: 1, max: 1e6 }),
    invalid: [0, 1.5, "5"],
    effective: (o) => o.maxOngoingRequests,
  },
  {
    path: "maxQueuedRequests",
    valid: fc.integer({ min: -1, max: 1e4 }),
    invalid: [-2, 0.5],
    effective: (o) => o.maxQueuedRequests,
  },
  {
    path: "queueTimeoutS",
    valid: num(0, 3600, { gt: true }),
    invalid: [0, 3600.5, Number.NaN],
    effective: (o) => o.queueTimeoutMs,
    meaning: ms,
  },
  {
    path: "leaseTimeoutS",
    valid: num(0, 86_400, { gt: true }),
    invalid: [0, 86_401],
    effective: (o) => o.leaseTimeoutMs,
    meaning: ms,
  },
  {
    path: "backpressure.statusCode",
    valid: fc.constantFrom(429, 503),
    invalid: [500, "429"],
    effective: (o) => o.statusCode,
  },
  {
    path: "backpressure.retryAfterPolicy",
    valid: fc.constantFrom(
      "booked_capacity",
      "static",
      "router_queue_drain_rate",
      "queue_drain_rate",
      "retry_schedule",
    ),
    invalid: ["ray", ""],
    effective: (o) => o.retryAfter.retryAfterPolicy,
  },
  {
    path: "backpressure.retryAfterS",
    valid: num(0, 1e6),
    invalid: [-1, Number.POSITIVE_INFINITY],
    effective: (o) => o.retryAfter.retryAfterS,
  },
  { path: "backpressure.jitter", valid: num(0, 1), invalid: [-0.1, 1.1], effective: (o) => o.retryAfter.jitter },
  { path: "estimator.alpha", valid: num(0, 1, { gt: true }), invalid: [0, 1.01], effective: (o) => o.drainRate.alpha },
  {
    path: "estimator.intervalS",
    valid: num(0, 3600, { gt: true }),
    invalid: [0, 3601],
    effective: (o) => o.drainRate.intervalS,
  },
  {
    path: "estimator.warmupSamples",
    valid: fc.integer({ min: 1, max: 1000 }),
    invalid: [0, 1001, 2.5],
    effective: (o) => o.drainRate.warmupSamples,
  },
  {
    path: "estimator.backoffStreakSaturation",
    valid: fc.integer({ min: 1, max: 1e6 }),
    invalid: [0, 1.5],
    effective: (o) => o.retryAfter.saturation.backoffStreakSaturation,
  },
  {
    path: "estimator.occupancyWeight",
    valid: num(0, 10),
    invalid: [-1, 10.5],
    effective: (o) => o.retryAfter.saturation.occupancyWeight,
  },
  {
    path: "estimator.backoffWeight",
    valid: num(0, 10),
    invalid: [-1, 10.5],
    effective: (o) => o.retryAfter.saturation.backoffWeight,
  },
  {
    path: "booking.queueDelayTargetS",
    valid: nullable(num(0, 3600, { gt: true })),
    invalid: [0, 3601],
    effective: (o) => booking(o).queueDelayTargetS ?? null,
  },
  {
    path: "booking.standingIntervalS",
    valid: num(0, 3600),
    invalid: [-1, 3601],
    effective: (o) => booking(o).standingIntervalS,
  },
  {
    path: "booking.standingTimeoutS",
    valid: nullable(num(0, 3600, { gt: true })),
    invalid: [0, 3601],
    effective: (o) => booking(o).standingTimeoutS ?? null,
  },
  {
    path: "booking.maxHeldRoomShare",
    valid: num(0, 1),
    invalid: [-0.5, 1.5],
    effective: (o) => booking(o).maxHeldRoomShare,
  },
  {
    path: "booking.drainingOfferedShare",
    valid: nullable(num(0, 10, { gt: true })),
    invalid: [0, 11],
    effective: (o) => booking(o).drainingOfferedShare ?? null,
  },
  {
    path: "booking.lastChanceAfterRefusals",
    valid: nullable(fc.integer({ min: 1, max: 100 })),
    invalid: [0, 101, 1.5],
    effective: (o) => booking(o).lastChanceAfterRefusals ?? null,
  },
  {
    path: "booking.demoteAfterS",
    valid: nullable(num(0, 3600, { gt: true })),
    invalid: [0, 3601],
    effective: (o) => booking(o).demoteAfterS ?? null,
  },
  {
    path: "booking.demotedOrder",
    valid: fc.constantFrom("newest_first", "arrival", "next_horizon"),
    invalid: ["lifo"],
    // RouterCore reads an absent order as FairQueue's own default, newest_first.
    effective: (o) => booking(o).demotedOrder ?? "newest_first",
  },
  {
    path: "booking.demotedServiceS",
    valid: nullable(num(0, 600, { gt: true })),
    invalid: [0, 601],
    effective: (o) => booking(o).demotedServiceS ?? null,
  },
  {
    path: "booking.demotedTimeoutS",
    valid: nullable(num(0, 3600, { gt: true })),
    invalid: [0, 3601],
    effective: (o) => booking(o).demotedTimeoutS ?? null,
  },
  {
    path: "booking.demotedQuietTimeoutS",
    valid: nullable(num(0, 3600, { gt: true })),
    invalid: [0, 3601],
    effective: (o) => booking(o).demotedQuietTimeoutS ?? null,
  },
  {
    path: "booking.freshOrder",
    valid: fc.constantFrom("arrival", "next_horizon"),
    invalid: ["newest_first"],
    effective: (o) => booking(o).freshOrder ?? "arrival",
  },
  {
    path: "booking.demotedShare",
    valid: num(0, 1),
    invalid: [-0.1, 1.1],
    effective: (o) => booking(o).demotedShare ?? 0,
  },
  {
    path: "booking.freshNewestShare",
    valid: num(0, 1),
    invalid: [-0.1, 1.1],
    effective: (o) => booking(o).freshNewestShare ?? 0,
  },
  {
    path: "booking.freshNewestWhen",
    valid: fc.constantFrom("always", "standing"),
    invalid: ["never"],
    effective: (o) => booking(o).freshNewestWhen ?? "always",
  },
  {
    path: "booking.demotedFirstUnderS",
    valid: nullable(num(0, 600, { gt: true })),
    invalid: [0, 601],
    effective: (o) => booking(o).demotedFirstUnderS ?? null,
  },
  {
    path: "booking.drainingIgnoresDemoted",
    valid: fc.boolean(),
    invalid: ["yes", 1],
    effective: (o) => booking(o).drainingIgnoresDemoted ?? false,
  },
  {
    path: "booking.forgetRefusalsWhenQueued",
    valid: fc.boolean(),
    invalid: [0],
    effective: (o) => booking(o).forgetRefusalsWhenQueued ?? false,
  },
  {
    path: "booking.freshPastTargetShare",
    valid: nullable(num(0, 10, { gt: true })),
    invalid: [0, 10.5],
    effective: (o) => booking(o).freshPastTargetShare ?? null,
  },
  {
    path: "booking.sdkClientsLeaveShare",
    valid: num(0, 0.9),
    invalid: [-0.1, 0.95],
    effective: (o) => booking(o).sdkClientsLeaveShare ?? 0,
  },
  {
    path: "booking.demotedHeadroomSlots",
    valid: fc.integer({ min: 0, max: 10_000 }),
    invalid: [-1, 10_001, 0.5],
    effective: (o) => booking(o).demotedHeadroomSlots ?? 0,
  },
  {
    path: "tenantHeadroomSlots",
    valid: fc.integer({ min: 0, max: 1e4 }),
    invalid: [-1, 0.5],
    effective: (o) => o.tenantHeadroomSlots ?? 0,
  },
];

/** Writes `value` at a dotted path of `into`. */
function write(into: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const keys = path.split(".");
  let at = into;
  for (const key of keys.slice(0, -1)) {
    at[key] ??= {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys[keys.length - 1] as string] = value;
  return into;
}

const written = fc
  .tuple(...SETTINGS.map((s) => fc.option(s.valid, { nil: undefined, freq: 2 })))
  .map((values) => values.map((v, i) => ({ setting: SETTINGS[i] as Setting, v })).filter((w) => w.v !== undefined));

const defaults = routerOptionsFromSettings(["r"], routerSettingsSchema.parse({}));

describe("router settings, as written and as the core reads them", () => {
  it("the table here covers every setting of the schema", () => {
    const leaves = (shape: Record<string, unknown>, prefix = ""): string[] =>
      Object.entries(shape).flatMap(([k, v]) =>
        v !== null && typeof v === "object"
          ? leaves(v as Record<string, unknown>, `${prefix}${k}.`)
          : [`${prefix}${k}`],
      );
    // Every setting with a default, and the optional static Retry-After.
    const paths = [...leaves(routerSettingsSchema.parse({}) as Record<string, unknown>), "backpressure.retryAfterS"];
    expect(SETTINGS.map((s) => s.path).sort()).toEqual([...new Set(paths)].sort());
  });

  it("every setting written in range reaches the core with its meaning; the rest with their defaults'", () => {
    fc.assert(
      fc.property(written, (ws) => {
        const input = ws.reduce((doc, w) => write(doc, w.setting.path, w.v), {} as Record<string, unknown>);
        const settings = routerSettingsSchema.parse(input);
        expect(routerSettingsSchema.parse(settings)).toEqual(settings);
        const options = routerOptionsFromSettings(["r"], settings);
        for (const s of SETTINGS) {
          const w = ws.find((x) => x.setting === s);
          const want = w === undefined ? s.effective(defaults) : (s.meaning ?? ((v) => v))(w.v);
          expect(s.effective(options), `${s.path} written ${String(w?.v)}`).toBe(want);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("a value past its range or of the wrong type is refused, naming the setting", () => {
    fc.assert(
      fc.property(
        written,
        fc.constantFrom(...SETTINGS.flatMap((s) => s.invalid.map((bad) => ({ s, bad })))),
        (ws, { s, bad }) => {
          const input = ws.reduce((doc, w) => write(doc, w.setting.path, w.v), {} as Record<string, unknown>);
          write(input, s.path, bad);
          const result = routerSettingsSchema.safeParse(input);
          expect(result.success, `${s.path} = ${String(bad)}`).toBe(false);
          expect(result.error).toBeInstanceOf(ZodError);
          expect(result.error?.issues.map((i) => i.path.join("."))).toContain(s.path);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
