import { describe, expect, it } from "vitest";
import { engineOptionsSchema } from "../../../src/engine/options";
import {
  defaultMaxRunningRequests,
  resolveSchedulerOptions,
  SCHEDULER_DEFAULTS,
  SchedulerConfigError,
} from "../../../src/scheduler/index.js";

describe("scheduler options (one schema, one set of defaults)", () => {
  it("applies SGLang's defaults, and max running requests = min(pool / 2, 4096), at least 1", () => {
    const resolved = resolveSchedulerOptions({ maxTotalTokens: 32_768 });
    expect(resolved).toMatchObject({ ...SCHEDULER_DEFAULTS, maxTotalTokens: 32_768, maxRunningRequests: 4096 });
    expect(resolveSchedulerOptions({ maxTotalTokens: 1000 }).maxRunningRequests).toBe(500);
    expect([1, 2, 3, 9_000, 100_000].map(defaultMaxRunningRequests)).toEqual([1, 1, 1, 4096, 4096]);
    expect(resolveSchedulerOptions({ maxTotalTokens: 1000, maxRunningRequests: 7 }).maxRunningRequests).toBe(7);
  });

  it("the defaults are the spec's numbers (compared with literals, not with SCHEDULER_DEFAULTS itself)", () => {
    expect(resolveSchedulerOptions({ maxTotalTokens: 4096 })).toMatchObject({
      pageSize: 1, // pageSize (default 1)
      clipMaxNewTokens: 4096, // CLIP = 4096
      maxPrefillTokens: 16384, // maxPrefillTokens = 16384
      scheduleConservativeness: 1, // scheduleConservativeness = 1.0
      schedulePolicy: "fcfs", // policy fcfs
      disableRadixCache: false, // prefix (radix) cache on by default
      initNewTokenRatio: 0.7, // SGLANG_INIT_NEW_TOKEN_RATIO = 0.7
      minNewTokenRatioFactor: 0.14, // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
      newTokenRatioDecaySteps: 600, // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
      retractDecodeSteps: 20, // SGLANG_RETRACT_DECODE_STEPS
      decodeLogInterval: 40, // decode lines every 40 steps by default
    });
  });

  it("names every bad field in one SchedulerConfigError", () => {
    const bad = () =>
      resolveSchedulerOptions({ maxTotalTokens: 100, pageSize: 200, minNewTokenRatioFactor: 2, decodeLogInterval: 0 });
    expect(bad).toThrow(SchedulerConfigError);
    expect(bad).toThrow(/decodeLogInterval/);
    expect(bad).toThrow(/minNewTokenRatioFactor/);
    expect(() => resolveSchedulerOptions({ maxTotalTokens: 100, pageSize: 200 })).toThrow(/pageSize/);
    expect(() => resolveSchedulerOptions({ maxTotalTokens: 100, pageSize: 8, chunkedPrefillSize: 4 })).toThrow(
      /chunkedPrefillSize/,
    );
  });

  it("refuses an option it does not know, by name, rather than running on a default", () => {
    const misspelt = { maxTotalTokens: 1000, pagesize: 16 } as unknown as Parameters<typeof resolveSchedulerOptions>[0];
    expect(() => resolveSchedulerOptions(misspelt)).toThrow(SchedulerConfigError);
    expect(() => resolveSchedulerOptions(misspelt)).toThrow(/pagesize/);
  });

  it("the engine's options default to the scheduler's values", () => {
    const engine = engineOptionsSchema.parse({});
    expect({
      pageSize: engine.pageSize,
      maxPrefillTokens: engine.maxPrefillTokens,
      chunkedPrefillSize: engine.chunkedPrefillSize,
      scheduleConservativeness: engine.scheduleConservativeness,
      schedulePolicy: engine.schedulePolicy,
      disableRadixCache: engine.disableRadixCache,
      clipMaxNewTokens: engine.clipMaxNewTokensEstimation,
      initNewTokenRatio: engine.initNewTokenRatio,
      minNewTokenRatioFactor: engine.minNewTokenRatioFactor,
      newTokenRatioDecaySteps: engine.newTokenRatioDecaySteps,
      retractDecodeSteps: engine.retractDecodeSteps,
      decodeLogInterval: engine.decodeLogInterval,
    }).toEqual(SCHEDULER_DEFAULTS);
  });
});
