import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { DEFAULT_CLIENT_MIX, drawClient, LEGACY_CLIENTS } from "../../../src/sim/client-mix";
import { CLIENT_PROFILES, retryDelay } from "../../../src/sim/client-model";
import { computeMetrics } from "../../../src/sim/metrics";
import { computeOracle } from "../../../src/sim/oracle";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { randomStream } from "../../../src/sim/random-streams";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

const policy = (id: string) => EVAL_POLICIES.find((p) => p.id === id) as (typeof EVAL_POLICIES)[number];

describe("client mix", () => {
  it("draws styles in the mix's proportions and log-normal round trips (median 80 ms, p99 600 ms)", () => {
    const config = {
      mix: DEFAULT_CLIENT_MIX,
      roundTrip: { kind: "lognormal" as const, medianMs: 80, p99Ms: 600 },
      workerToRouterMs: 5,
    };
    const clients = Array.from({ length: 20_000 }, (_, i) => drawClient(config, randomStream(1, "t", i)));
    const share = (style: string) => clients.filter((c) => c.profile.style === style).length / clients.length;
    expect(share("openai_node")).toBeCloseTo(0.5, 1);
    expect(share("no_show")).toBeCloseTo(0.05, 1);
    const rtts = clients.map((c) => c.roundTripMs).sort((a, b) => a - b);
    expect(rtts[Math.floor(rtts.length / 2)]).toBeGreaterThan(70);
    expect(rtts[Math.floor(rtts.length / 2)]).toBeLessThan(90);
    expect(rtts[Math.floor(rtts.length * 0.99)]).toBeGreaterThan(450);
    expect(rtts[Math.floor(rtts.length * 0.99)]).toBeLessThan(800);
  });

  it("each style reads the headers it reads: node any hint, python up to 60 s, curl whole seconds, backoff none", () => {
    const hint = { retryAfterMs: 90_500, retryAfterS: 91 };
    expect(retryDelay(CLIENT_PROFILES.openai_node, hint, 0, () => 0)).toEqual({ delayMs: 90_500, hinted: true });
    expect(retryDelay(CLIENT_PROFILES.openai_python, hint, 0, () => 0)).toEqual({ delayMs: 500, hinted: false });
    expect(retryDelay(CLIENT_PROFILES.headerless_hints, hint, 0, () => 0)).toEqual({ delayMs: 91_000, hinted: true });
    expect(retryDelay(CLIENT_PROFILES.backoff_only, hint, 1, () => 0)).toEqual({ delayMs: 1_000, hinted: false });
  });
});

describe("measures and oracle", () => {
  const scenario = smallBurst();
  const capacity = measureCapacity(scenario);
  const workload = generateWorkload(scenario, capacity);

  it("attempts per offered count failed requests' attempts; the completion curve only grows with the horizon", () => {
    const m = computeMetrics(runSimulation(scenario, policy("static-5"), workload));
    const attempts = runSimulation(scenario, policy("static-5"), workload).requests.reduce(
      (s, r) => s + r.attempts.length,
      0,
    );
    expect(m.attemptsPerOffered).toBeCloseTo(attempts / workload.length);
    expect(m.hintCoverage).toBe(1);
    const curve = Object.values(m.servedWithinS);
    for (let i = 1; i < curve.length; i++) expect(curve[i]).toBeGreaterThanOrEqual(curve[i - 1] as number);
    expect(curve[curve.length - 1]).toBeLessThanOrEqual(m.servedFraction + 1e-12);
    expect(computeMetrics(runSimulation(scenario, policy("none"), workload)).hintCoverage).toBe(0);
  });

  it("the oracle serves everyone under capacity and at least as many as any policy in a burst", () => {
    const light = smallBurst({ phases: [{ durationS: 30, load: 0.5 }] });
    expect(computeOracle(light, generateWorkload(light, capacity), capacity).servedFraction).toBe(1);
    const oracle = computeOracle(scenario, workload, capacity);
    for (const p of EVAL_POLICIES) {
      const m = computeMetrics(runSimulation(scenario, p, workload));
      expect(oracle.servedFraction).toBeGreaterThanOrEqual(m.servedFraction - 0.02);
    }
  });

  it("the earlier all-SDK, zero-round-trip model is still available as a variant", () => {
    const legacy = smallBurst({ clients: LEGACY_CLIENTS });
    const trace = runSimulation(legacy, policy("static-5"), generateWorkload(legacy, capacity));
    expect(new Set(trace.requests.map((r) => r.client))).toEqual(new Set(["legacy_sdk"]));
    expect(trace.requests.every((r) => r.roundTripMs === 0)).toBe(true);
  });
});
