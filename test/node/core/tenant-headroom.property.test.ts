import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PriorityClass } from "../../../src/core/fair-queue";
import { TENANT_ACTIVE_WINDOW_MS, TenantHeadroom } from "../../../src/core/tenant-headroom";
import { propertyRuns } from "../../support/property-runs";

/**
 * The router's per-tenant headroom under arbitrary arrivals (queued, or placed at once as a hand-off places them),
 * placements from the queue, ends (and stray ones), silent removals from the queue (a cancel or a timeout tells the
 * headroom nothing), floods of one-off tenant names and time steps of every size, many of them landing exactly on an
 * activity window's end or a gate's recheck instant, +-1 ms. It is held, after every step and for every count of free
 * slots up to one past the headroom, to a small model written from its JSDoc with exact (integer) arithmetic:
 *
 * - a tenant is active in a class while a request of it in that class is in flight or waits, and for exactly the
 *   window after one last arrived or ended there (active at `seen + window - 1`, not at `seen + window`); its weight
 *   is its latest request's, its share `fleetSlots * weight / (the active tenants' weights)`;
 * - `gate` is undefined exactly when more than `headroomSlots` are free, fewer than two tenants are active, or no
 *   active tenant is below its share, or none at or above it; otherwise `holds(t, class)` exactly when `t` is active
 *   at or above its share and some active tenant below its share is active in `class` (batch: active at all), so it
 *   never lets a tenant at its share take the last slots while one below is active, never holds one below its share,
 *   never holds interactive work for batch-only tenants, and never holds anyone when the JSDoc says to place;
 * - `recheckAtMs` is after now, at most a window away, one of the protected tenants' window ends (or a window from
 *   now for one with work), and no hold of the gate lapses before it without an event (the router sleeps until then,
 *   so a hold that lapsed earlier would leave a slot idle while the held request waits); checked at every threshold
 *   of the model's clock between now and the recheck;
 * - `gate` is pure (asked twice, and about the future, it answers the same and changes nothing), in-flight counts
 *   never go below zero (a stray end changes nothing), and memory stays bounded: every tenant active or in flight
 *   is remembered, and no more than the larger of 64 and twice the most tenants ever active at once.
 */

const W = TENANT_ACTIVE_WINDOW_MS;
const CLASSES = ["interactive", "batch"] as const;
/** Weights in halves (the model compares shares in integers): 0.5, 1, 2, 3. */
const WEIGHT_HALVES = [1, 2, 4, 6] as const;

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "toThreshold"; pick: number; offset: -1 | 0 | 1 }
  | { kind: "arrive"; tenant: number; reweight: number | undefined; batch: boolean; direct: boolean }
  | { kind: "place"; tenant: number; batch: boolean }
  | { kind: "end"; tenant: number; batch: boolean }
  | { kind: "cancel"; tenant: number; batch: boolean }
  | { kind: "flood"; count: number; gapMs: number; batch: boolean };

const tenantIndex = fc.integer({ min: 0, max: 3 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        fc.constantFrom(0, 1, W - 1, W, W + 1),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 200, max: 2 * W }),
        fc.integer({ min: 2 * W, max: 50 * W }),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("toThreshold" as const),
      pick: fc.nat(),
      offset: fc.constantFrom(-1 as const, 0 as const, 1 as const),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("arrive" as const),
      tenant: tenantIndex,
      reweight: fc.option(fc.constantFrom(...WEIGHT_HALVES), { nil: undefined, freq: 4 }),
      batch: fc.boolean(),
      direct: fc.boolean(),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("place" as const), tenant: tenantIndex, batch: fc.boolean() }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("end" as const), tenant: tenantIndex, batch: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("cancel" as const), tenant: tenantIndex, batch: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("flood" as const),
      count: fc.integer({ min: 1, max: 100 }),
      gapMs: fc.constantFrom(0, W / 4, W),
      batch: fc.boolean(),
    }),
  },
);

/** A run's setting: the headroom, the fleet's slots (`slots / shards`), the tenants and their usual weights. */
const setting = fc.record({
  headroom: fc.constantFrom(1, 2, 3),
  slots: fc.constantFrom(2, 3, 4, 6, 8, 12),
  shards: fc.constantFrom(1, 1, 3),
  weights: fc.array(fc.constantFrom(...WEIGHT_HALVES), { minLength: 2, maxLength: 4 }),
});
type Setting = typeof setting extends fc.Arbitrary<infer T> ? T : never;

/** What the model knows of a tenant: its latest weight (halves), its requests in flight and when it was last seen. */
interface Known {
  halves: number;
  inFlight: Record<PriorityClass, number>;
  seenMs: Record<PriorityClass, number | undefined>;
}

/** The model's verdict at one instant (free slots aside): undefined when nothing is held. */
interface Verdict {
  held: Set<string>;
  protectedIn: Record<PriorityClass, boolean>;
  /** The tenants below their share (the protected ones). */
  below: string[];
}

function run(ops: readonly Op[], s: Setting): string[] {
  let now = 0;
  const names = s.weights.map((_, i) => (i === 3 ? "" : `tenant-${i}`)); // "" is the router's untagged traffic
  // The router's queue: requests waiting per tenant and class (what `waiting` reads).
  const queue = new Map<string, number>();
  const key = (t: string, c: PriorityClass) => `${c}/${t}`;
  const waits = (t: string, c: PriorityClass) => (queue.get(key(t, c)) ?? 0) > 0;
  const headroom = new TenantHeadroom(s.headroom, s.slots / s.shards, waits);
  const model = new Map<string, Known>();
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  let rechecks: number[] = [];
  let peakActive = 0;
  let flooded = 0;

  const activeIn = (t: string, k: Known, c: PriorityClass, at: number) =>
    k.inFlight[c] > 0 || waits(t, c) || (k.seenMs[c] !== undefined && at < (k.seenMs[c] as number) + W);
  const active = (at: number) => [...model].filter(([t, k]) => CLASSES.some((c) => activeIn(t, k, c, at)));
  const verdict = (at: number): Verdict | undefined => {
    const on = active(at);
    if (on.length < 2) return undefined;
    const total = on.reduce((sum, [, k]) => sum + k.halves, 0);
    // At or above its share: inFlight >= (slots / shards) * halves / total, in integers.
    const atShare = ([, k]: [string, Known]) =>
      (k.inFlight.interactive + k.inFlight.batch) * total * s.shards >= s.slots * k.halves;
    const held = new Set(on.filter(atShare).map(([t]) => t));
    const below = on.filter((e) => !atShare(e));
    if (held.size === 0 || below.length === 0) return undefined;
    return {
      held,
      protectedIn: { batch: true, interactive: below.some(([t, k]) => activeIn(t, k, "interactive", at)) },
      below: below.map(([t]) => t),
    };
  };
  const holds = (v: Verdict | undefined, t: string, c: PriorityClass) => (v?.held.has(t) && v.protectedIn[c]) === true;
  /** The instants the model's activity may change by itself: every window's end. */
  const thresholds = () => {
    const out: number[] = [];
    for (const k of model.values())
      for (const c of CLASSES) if (k.seenMs[c] !== undefined) out.push((k.seenMs[c] as number) + W);
    return out;
  };
  /** The module's gate at `at` with `free` slots against the model's verdict. */
  const compare = (at: number, free: number, v: Verdict | undefined, where: string) => {
    const gate = headroom.gate(at, free);
    const expected = free > s.headroom ? undefined : v;
    if ((gate === undefined) !== (expected === undefined)) {
      fail(`${where}: gate(${at}, ${free}) ${gate ? "holds" : "is open"}, model ${expected ? "holds" : "open"}`);
      return gate;
    }
    if (!gate) return gate;
    // Every tenant of the run, the latest few one-offs of a flood, and one never seen.
    for (const t of [...names, ...[...model.keys()].filter((n) => n.startsWith("one-off-")).slice(-3), "never-seen"])
      for (const c of CLASSES)
        if (gate.holds(t, c) !== holds(expected, t, c))
          fail(`${where}: gate(${at}, ${free}).holds(${JSON.stringify(t)}, ${c}) = ${gate.holds(t, c)}`);
    return gate;
  };

  const known = (t: string) => model.get(t);
  // One-off tenants gone quiet stay quiet (the clock only moves forward): the model forgets them.
  const forgetQuietOneOffs = () => {
    for (const [name, k] of model)
      if (name.startsWith("one-off-") && !CLASSES.some((c) => activeIn(name, k, c, now))) model.delete(name);
  };
  const arrive = (t: string, halves: number, c: PriorityClass) => {
    headroom.arrived(t, halves / 2, c, now);
    const k = model.get(t) ?? {
      halves,
      inFlight: { interactive: 0, batch: 0 },
      seenMs: { interactive: undefined, batch: undefined },
    };
    k.halves = halves;
    k.seenMs[c] = now;
    model.set(t, k);
  };

  for (const o of ops) {
    const cls: PriorityClass = "batch" in o && o.batch ? "batch" : "interactive";
    const t = "tenant" in o ? (names[o.tenant % names.length] as string) : "";
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "toThreshold") {
      const targets = [...thresholds(), ...rechecks].filter((x) => x + o.offset > now);
      if (targets.length > 0) now = (targets[o.pick % targets.length] as number) + o.offset;
    } else if (o.kind === "arrive") {
      arrive(t, o.reweight ?? (s.weights[o.tenant % names.length] as number), cls);
      if (o.direct) {
        headroom.placed(t, cls);
        (known(t) as Known).inFlight[cls] += 1;
      } else queue.set(key(t, cls), (queue.get(key(t, cls)) ?? 0) + 1);
    } else if (o.kind === "place" || o.kind === "cancel") {
      // A waiting request leaves the queue: placed (the headroom hears of it), or cancelled (it does not).
      const n = queue.get(key(t, cls)) ?? 0;
      if (n === 0) continue;
      queue.set(key(t, cls), n - 1);
      if (o.kind === "place") {
        headroom.placed(t, cls);
        (known(t) as Known).inFlight[cls] += 1;
      }
    } else if (o.kind === "end") {
      // A stray end (nothing of that class in flight) is told too: it must change nothing.
      headroom.ended(t, cls, now);
      const k = known(t);
      if (k && k.inFlight[cls] > 0) {
        k.inFlight[cls] -= 1;
        k.seenMs[cls] = now;
      }
    } else {
      for (let i = 0; i < o.count; i++) {
        if (i > 0) now += o.gapMs;
        if (o.gapMs > 0) forgetQuietOneOffs();
        arrive(`one-off-${flooded++}`, 2, cls);
        // All at once, the count of active tenants only grows: its peak is at the end.
        if (o.gapMs > 0 || i === o.count - 1) peakActive = Math.max(peakActive, active(now).length);
      }
    }

    forgetQuietOneOffs();
    const v = verdict(now);
    const on = active(now).length;
    peakActive = Math.max(peakActive, on);
    rechecks = [];
    let recheck: number | undefined;
    for (let free = 0; free <= s.headroom + 1; free++) {
      const gate = compare(now, free, v, o.kind);
      if (!gate) continue;
      // Pure: asked again, the same answer; and the recheck does not depend on the free slots.
      if (headroom.gate(now, free)?.recheckAtMs !== gate.recheckAtMs) fail(`gate(${now}, ${free}) answered twice`);
      if (recheck !== undefined && gate.recheckAtMs !== recheck) fail(`rechecks ${recheck} and ${gate.recheckAtMs}`);
      recheck = gate.recheckAtMs;
    }
    if (v && recheck !== undefined) {
      rechecks.push(recheck);
      if (!(recheck > now && recheck <= now + W)) fail(`recheck at ${recheck}, now ${now}`);
      // A window after one was last seen, or (for a tenant with work, whose work may leave the queue silently) from now.
      const ends = v.below.flatMap((b) => {
        const k = model.get(b) as Known;
        const work = CLASSES.some((c) => k.inFlight[c] > 0 || waits(b, c));
        const seen = CLASSES.flatMap((c) => (k.seenMs[c] === undefined ? [] : [(k.seenMs[c] as number) + W]));
        return work ? [now + W, ...seen] : seen;
      });
      if (!ends.includes(recheck)) fail(`recheck at ${recheck} is no protected tenant's window end`);
      // No hold lapses before the recheck without an event: the model at every threshold in between, and the
      // module's answer there (asked about the future, it changes nothing).
      const until = recheck;
      const between = [...new Set([...thresholds(), until - 1])].filter((x) => x > now && x < until);
      for (const at of between) {
        const later = verdict(at);
        for (const h of v.held)
          for (const c of CLASSES)
            if (holds(v, h, c) && !holds(later, h, c))
              fail(`the hold of ${JSON.stringify(h)} (${c}) lapses at ${at}, before the recheck at ${until}`);
        compare(at, 0, later, `${o.kind}, ahead`);
      }
    }
    // Memory: every tenant active or in flight is remembered; no more than the larger of 64 and twice the peak.
    const inFlight = [...model.values()].filter((k) => k.inFlight.interactive + k.inFlight.batch > 0).length;
    if (headroom.tracked < Math.max(on, inFlight)) fail(`tracks ${headroom.tracked} of ${on} active`);
    if (headroom.tracked > Math.max(64, 2 * peakActive)) fail(`tracks ${headroom.tracked}, peak active ${peakActive}`);
    if (violations.length > 0) break;
  }
  return violations;
}

describe("the tenant headroom under arbitrary arrivals, placements, ends and time", () => {
  it("holds exactly whom its JSDoc says, rechecks before a hold lapses, and forgets only quiet tenants", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 120, size: "medium" }), setting, (ops, s) => {
        expect(run(ops, s)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
