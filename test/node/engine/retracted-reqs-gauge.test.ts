import { describe, expect, it } from "vitest";
import { createEngineLoop, type SchedulerLike } from "../../../src/engine/engine-loop";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { createRetractedReqsGauge } from "../../../src/engine/retracted-reqs-gauge";
import { tokenizer } from "../../../src/engine/tokenizer";
import { Scheduler, type SchedulerEvent } from "../../../src/scheduler/index";

const retraction = (n: number): SchedulerEvent => ({
  type: "retraction",
  now: 0,
  retractedIds: Array.from({ length: n }, (_, i) => `r${i}`),
  inputTokens: 0,
  outputTokens: 0,
  oldRatio: 0.5,
  newRatio: 0.6,
});
const decodeLine: SchedulerEvent = {
  type: "decode",
  now: 0,
  runningReq: 1,
  token: 1,
  tokenUsage: 0,
  genThroughput: 0,
  queueReq: 0,
};

describe("sglang:num_retracted_reqs, as SGLang's scheduler sets it", () => {
  it("moves only at log lines, shows the interval's last retraction, and keeps it until the next line", () => {
    const values: number[] = [];
    const g = createRetractedReqsGauge((v) => values.push(v));
    g.retracted(3);
    expect(values).toEqual([]); // a retraction alone does not move the gauge
    g.logLine();
    g.retracted(2);
    g.retracted(1); // SGLang assigns len(retracted_reqs): the interval's last retraction wins
    g.logLine();
    g.logLine(); // an interval without retraction
    expect(values).toEqual([3, 1, 0]);
  });

  it("a scrape right after a log line reads what that interval retracted (the engine loop's wiring)", async () => {
    // A scripted scheduler: each step's events, in order; the engine reads the gauge while each step runs.
    const script: SchedulerEvent[][] = [[retraction(3)], [decodeLine], [], [retraction(2)], [decodeLine], [decodeLine]];
    const real = new Scheduler({ maxTotalTokens: 4096 });
    let step = 0;
    const scripted: SchedulerLike = {
      submit: (r) => real.submit(r),
      get: (id) => real.get(id),
      abort: (id) => real.abort(id),
      state: () => real.state(),
      admissionHeadroomTokens: () => real.admissionHeadroomTokens(),
      nextBatch: () => {
        const events = script[step++];
        if (events === undefined) return { kind: "idle", events: [], ended: [] };
        return { kind: "decode", requests: [], events, ended: [] };
      },
      completeBatch: () => ({ ended: [], events: [] }),
    };
    const metrics = createEngineMetrics("m");
    const seen: Promise<number | undefined>[] = [];
    let ran!: () => void;
    const done = new Promise<void>((resolve) => {
      ran = resolve;
    });
    const core = createEngineLoop({
      scheduler: { maxTotalTokens: 4096 },
      createScheduler: () => scripted,
      engine: {
        prefill: async () => [],
        decode: async () => {
          seen.push(metrics.numRetractedReqs.get().then((m) => m.values[0]?.value));
          if (seen.length === script.length) ran();
          return [];
        },
        release: () => {},
      },
      tokenizer,
      metrics,
      logger: createLogger("error", () => {}),
      now: () => 0,
    });
    await done;
    // After each step's events: 0 (retraction pending), 3 (the line closed an interval of 3), still 3 (no line
    // since), 3 (a retraction of 2 pending), 2, then 0 for an interval without retraction.
    expect(await Promise.all(seen)).toEqual([0, 3, 3, 3, 2, 0]);
    await core.close();
  });
});
