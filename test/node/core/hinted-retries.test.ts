import { describe, expect, it } from "vitest";
import { clientHorizonS } from "../../../src/core/client-horizon";
import { HintedRetryTracker } from "../../../src/core/hinted-retries";

describe("HintedRetryTracker (X in production)", () => {
  it("classifies a returning hinted request as early, on time or late against its hint", () => {
    const tracker = new HintedRetryTracker();
    tracker.hinted("a", 0, 10);
    tracker.hinted("b", 0, 10);
    tracker.hinted("c", 0, 10);
    expect(tracker.returned("a", 5_000)).toBe("early");
    expect(tracker.returned("b", 10_400)).toBe("on_time");
    expect(tracker.returned("c", 14_000)).toBe("late");
    expect(tracker.returned("a", 10_000)).toBeUndefined(); // counted once
    expect(tracker.returned("never-hinted", 10_000)).toBeUndefined();
    tracker.count("admitted", "on_time");
    tracker.count("refused", "late");
    expect(tracker.counts()).toEqual({
      admitted: { early: 0, on_time: 1, late: 0 },
      refused: { early: 0, on_time: 0, late: 1 },
    });
  });

  it("remembers a bounded number of hints, forgetting the oldest", () => {
    const tracker = new HintedRetryTracker({ earlyMs: 1_000, lateMs: 3_000, capacity: 3 });
    for (let i = 0; i < 10; i++) tracker.hinted(`r${i}`, 0, 5);
    expect(tracker.tracked).toBe(3);
    expect(tracker.returned("r0", 5_000)).toBeUndefined();
    expect(tracker.returned("r9", 5_000)).toBe("on_time");
  });
});

describe("clientHorizonS", () => {
  it("is 120 s for openai-node from 6.35.0 (59 s before), 60 s for openai-python and clients without SDK headers", () => {
    expect(clientHorizonS({ lang: "js", packageVersion: "6.49.0" })).toBe(120);
    expect(clientHorizonS({ lang: " JS ", packageVersion: "6.35.0" })).toBe(120);
    expect(clientHorizonS({ lang: "js", packageVersion: "5.23.2" })).toBe(59);
    expect(clientHorizonS({ lang: "python", packageVersion: "1.99.0" })).toBe(60);
    expect(clientHorizonS({})).toBe(60);
  });
});
