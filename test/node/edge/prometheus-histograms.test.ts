import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import { prometheusText } from "../../../src/edge/prometheus";
import { routerOptions } from "../../support/router-options";

/** A router driven through an overload: warm estimator, computed hints, and queues that drain afterwards. */
function overloadedRouter() {
  let now = 0;
  const core = new RouterCore(
    routerOptions({ maxOngoingRequests: 1000, maxQueuedRequests: 4, queueTimeoutMs: 600_000 }),
    { now: () => now },
    (() => {
      let u = 0.1;
      return () => (u = (u + 0.37) % 1);
    })(),
  );
  const place = () => {
    const plan = core.beginRound();
    if (!plan) return;
    for (const r of plan.probe) core.reportProbe(r, 0);
    core.finishRound(plan);
  };
  const suggested: number[] = [];
  let n = 0;
  // 12 s: 4 arrivals every 250 ms into a queue of 4 that drains 2 per 250 ms; the rest are refused.
  for (let tick = 0; tick < 48; tick++) {
    for (let i = 0; i < 4; i++) {
      const r = core.submit(`r${n++}`);
      if (r.kind === "rejected" && r.rejection.decision.jitteredS !== undefined)
        suggested.push(r.rejection.decision.jitteredS);
    }
    place();
    place();
    now += 250;
  }
  for (let i = 0; i < 8; i++) {
    place();
    now += 250;
  }
  return { core, suggested };
}

/** Samples of one series family: `name{labels} value` lines, by their `le` label (or "" for none). */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const le = line.match(/le="([^"]+)"/)?.[1] ?? "";
    out.set(le, Number(line.split(" ").at(-1)));
  }
  return out;
}

describe("Prometheus histograms of the edge", () => {
  const { core, suggested } = overloadedRouter();
  const stats = core.stats();
  const text = prometheusText([
    {
      ...stats,
      deployment: "d",
      shard: 0,
      internal: { waiters: 0, recentlyCancelled: 0, pendingObservations: 0 },
      calls: { acquire: 0, releaseCalls: 0, slotsReleased: 0, handedOff: 0 },
    },
  ]);

  it("spillway_suggested_delay_seconds is complete: cumulative _bucket up to +Inf, _sum, _count", () => {
    expect(suggested.length).toBeGreaterThan(10);
    expect(text).toContain("# TYPE spillway_suggested_delay_seconds histogram");
    const buckets = [...samples(text, "spillway_suggested_delay_seconds_bucket").values()];
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b)); // cumulative
    expect(samples(text, "spillway_suggested_delay_seconds_bucket").get("+Inf")).toBe(suggested.length);
    expect(samples(text, "spillway_suggested_delay_seconds_count").get("")).toBe(suggested.length);
    const sum = samples(text, "spillway_suggested_delay_seconds_sum").get("") as number;
    expect(sum).toBeCloseTo(
      suggested.reduce((a, b) => a + b, 0),
      9,
    );
  });

  it("exports the drain-time error (suggested - observed) as a histogram too", () => {
    const observed = stats.recentObservations.filter((o) => o.suggestedS !== undefined);
    expect(observed.length).toBeGreaterThan(10);
    expect(text).toContain("# TYPE spillway_drain_time_error_seconds histogram");
    const buckets = samples(text, "spillway_drain_time_error_seconds_bucket");
    const values = [...buckets.values()];
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(buckets.get("+Inf")).toBe(observed.length);
    expect(samples(text, "spillway_drain_time_error_seconds_count").get("")).toBe(observed.length);
    const errors = observed.map((o) => (o.suggestedS as number) - o.observedS);
    expect(samples(text, "spillway_drain_time_error_seconds_sum").get("")).toBeCloseTo(
      errors.reduce((a, b) => a + b, 0),
      9,
    );
    expect(buckets.get("0")).toBe(errors.filter((e) => e <= 0).length);
  });
});
