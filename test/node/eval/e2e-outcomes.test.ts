import { describe, expect, it } from "vitest";
import { type E2eOutcome, summarizeE2ePolicy } from "../../../eval/e2e-outcomes";

const served = (key: string, latencyS: number, headerless = false): E2eOutcome => ({
  key,
  ok: true,
  latencyS,
  headerless,
  unfinished: false,
});
const failed = (key: string, headerless = false, unfinished = false): E2eOutcome => ({
  key,
  ok: false,
  latencyS: 0,
  headerless,
  unfinished,
});

describe("summarizeE2ePolicy (eval:e2e's figures from the client processes' outcomes)", () => {
  it("computes shares over all offered requests: served, completion curve, attempts, p50", () => {
    const outcomes = [served("a", 1), served("b", 10), served("c", 40), failed("d"), failed("e", false, true)];
    const s = summarizeE2ePolicy("static-30", outcomes, 9);
    expect(s).toMatchObject({ id: "static-30", requests: 5, served: 3, servedFraction: 0.6, unfinished: 1 });
    expect(s.servedWithinS).toEqual({ "5": 0.2, "15": 0.4, "30": 0.4, "60": 0.6, "120": 0.6 });
    expect(s.attemptsPerOffered).toBeCloseTo(1.8);
    expect(s.timeToSuccessP50S).toBe(10);
  });

  it("splits header-less and SDK clients, counting unfinished requests as not served", () => {
    const outcomes = [served("a", 1, true), failed("b", true, true), served("c", 2), served("d", 3), failed("e")];
    const s = summarizeE2ePolicy("p", outcomes, 5);
    expect(s.headerlessServedFraction).toBe(0.5);
    expect(s.sdkServedFraction).toBeCloseTo(2 / 3);
    expect(summarizeE2ePolicy("p", [served("a", 1)], 1).headerlessServedFraction).toBeNull();
  });

  it("pools seeds: the pooled outcomes and summed attempts give ratios over all requests", () => {
    const seedA = [served("a0", 1), failed("a1")];
    const seedB = [served("b0", 20), served("b1", 2), served("b2", 3), served("b3", 4)];
    const pooled = summarizeE2ePolicy("p", [...seedA, ...seedB], 3 + 5);
    expect(pooled.requests).toBe(6);
    expect(pooled.servedFraction).toBeCloseTo(5 / 6);
    expect(pooled.servedWithinS["5"]).toBeCloseTo(4 / 6);
    expect(pooled.attemptsPerOffered).toBeCloseTo(8 / 6);
  });

  it("reports an empty run as zero shares and no p50", () => {
    const s = summarizeE2ePolicy("p", [], 0);
    expect(s).toMatchObject({ requests: 0, servedFraction: 0, attemptsPerOffered: 0, timeToSuccessP50S: null });
  });
});
