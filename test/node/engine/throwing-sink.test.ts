import { afterEach, describe, expect, it } from "vitest";
import { createEngineLoop } from "../../../src/engine/engine-loop";
import {
  type EngineCore,
  type GenerationRequest,
  type GenerationSink,
  type RunningEngineServer,
  startEngineServer,
} from "../../../src/engine/index";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics, type EngineMetrics } from "../../../src/engine/metrics";
import { tokenizer } from "../../../src/engine/tokenizer";
import type { DecodeBatch, PrefillBatch } from "../../../src/scheduler/index";
import { recordingSink } from "../../support/recording-sink";
import { fakeScheduler } from "./fake-scheduler";

/** A sink whose named methods throw; it counts every call, so a test can see what the engine called after a throw. */
function throwingSink(throwIn: ReadonlyArray<keyof GenerationSink>) {
  const calls: Array<[keyof GenerationSink, string]> = [];
  const call =
    (method: keyof GenerationSink) =>
    (first: unknown): void => {
      calls.push([method, String(first)]);
      if (throwIn.includes(method)) throw new Error(`package user's bug in ${method}`);
    };
  const sink: GenerationSink = { onText: call("onText"), onFinish: call("onFinish"), onError: call("onError") };
  return { sink, calls, ends: () => calls.filter(([m]) => m !== "onText") };
}

const request = (id: string, maxTokens: number): GenerationRequest => ({
  id,
  promptTokens: [1, 2, 3],
  maxTokens,
  ignoreEos: true,
  stop: [],
});

let server: RunningEngineServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(extra: { oomAbortAtStep?: number } = {}) {
  const lines: string[] = [];
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 4096,
    speed: 1000,
    eosDistribution: "never",
    log: (l) => lines.push(l),
    ...(extra.oomAbortAtStep === undefined ? {} : { createScheduler: fakeScheduler(extra) }),
  });
  return { s: server, lines };
}

/** Nothing left running or waiting, by /load and by the Prometheus gauges, and a new request is served. */
async function expectServingWithNothingLeaked(s: RunningEngineServer) {
  const load = (await (await fetch(`${s.url}/load`)).json()) as { running: number; waiting: number };
  expect(load).toMatchObject({ running: 0, waiting: 0 });
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  expect(metrics).toMatch(/^sglang:num_running_reqs\{[^}]*\} 0$/m);
  expect(metrics).toMatch(/^sglang:num_queue_reqs\{[^}]*\} 0$/m);
  const later = recordingSink();
  s.core.submit(request("later", 4), later);
  await expect(later.done).resolves.toBe("length");
}

const sinkErrorLines = (lines: string[]) => lines.filter((l) => l.includes("package user's bug"));

/** A stop string longer than any answer of "a"s: the stop matcher holds all the text back until the request ends. */
const HOLDS_ALL_BACK = "a".repeat(50);

/**
 * An engine loop whose GPU answers "a" at every step, so that a request with stop {@link HOLDS_ALL_BACK} hears
 * one onText only: its last, delivered after the scheduler has ended it.
 */
async function withHeldBackText(
  body: (loop: { core: EngineCore; metrics: EngineMetrics; lines: string[] }) => Promise<void>,
) {
  const a = tokenizer.encode("a")[0] as number;
  const engine = {
    prefill: async (batch: PrefillBatch) => batch.entries.map(() => a),
    decode: async (batch: DecodeBatch) => batch.requests.map(() => a),
    release: () => {},
  };
  const metrics = createEngineMetrics("demo-model");
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  const core = createEngineLoop({ scheduler: { maxTotalTokens: 4096 }, engine, tokenizer, metrics, logger });
  try {
    await body({ core, metrics, lines });
  } finally {
    await core.close();
  }
}

// A package user's GenerationSink (startEngineServer(...).core.submit) is called from inside the engine loop: a
// method that throws must end that request alone, not stop the loop that serves every other request.
describe("EngineCore.submit with a sink whose method throws", () => {
  it("onText throws: that request is aborted once (onError, then nothing), the other finishes", async () => {
    const { s, lines } = await start();
    const bad = throwingSink(["onText"]);
    const good = recordingSink();
    s.core.submit(request("bad", 8), bad.sink);
    s.core.submit(request("good", 8), good);
    await expect(good.done).resolves.toBe("length");
    expect(bad.calls.filter(([m]) => m === "onText")).toHaveLength(1);
    expect(bad.ends()).toEqual([["onError", expect.stringMatching(/GenerationSink\.onText threw/)]]);
    expect(sinkErrorLines(lines)).toHaveLength(1);
    expect(sinkErrorLines(lines)[0]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] .*request bad/);
    expect(lines.some((l) => /Abort request bad, status: 500/.test(l))).toBe(true);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/^sglang:num_aborted_requests_total\{[^}]*\} 1$/m);
    await expectServingWithNothingLeaked(s);
  });

  it("onText throws on the text held back until the end: counted and logged as aborted, as one step earlier", async () => {
    await withHeldBackText(async ({ core, metrics, lines }) => {
      const bad = throwingSink(["onText"]);
      core.submit({ ...request("bad", 4), stop: [HOLDS_ALL_BACK] }, bad.sink);
      const good = recordingSink();
      core.submit(request("good", 8), good);
      await expect(good.done).resolves.toBe("length");
      expect(bad.calls).toEqual([
        ["onText", "aaaa"],
        ["onError", expect.stringMatching(/GenerationSink\.onText threw/)],
      ]);
      expect(sinkErrorLines(lines)).toHaveLength(1);
      expect(lines.filter((l) => /Abort request bad, status: 500/.test(l))).toHaveLength(1);
      const text = await metrics.registry.metrics();
      expect(text).toMatch(/^sglang:num_aborted_requests_total\{[^}]*\} 1$/m);
      // Each request counted once, with all its tokens (4 + 8).
      expect(text).toMatch(/^sglang:num_requests_total\{[^}]*\} 2$/m);
      expect(text).toMatch(/^sglang:generation_tokens_total\{[^}]*\} 12$/m);
    });
  });

  it("the last onText calls the request's abort function: no onFinish after it, counted as aborted", async () => {
    await withHeldBackText(async ({ core, metrics, lines }) => {
      const calls: string[] = [];
      const good = recordingSink();
      let abort = () => {};
      const sink: GenerationSink = {
        onText: (text) => {
          calls.push(`onText ${text}`);
          abort();
        },
        onFinish: (reason) => calls.push(`onFinish ${reason}`),
        onError: () => calls.push("onError"),
      };
      abort = core.submit({ ...request("bad", 4), stop: [HOLDS_ALL_BACK] }, sink);
      core.submit(request("good", 8), good);
      await expect(good.done).resolves.toBe("length");
      expect(calls).toEqual(["onText aaaa"]);
      expect(lines.filter((l) => /Abort request bad, status: 499/.test(l))).toHaveLength(1);
      expect(await metrics.registry.metrics()).toMatch(/^sglang:num_aborted_requests_total\{[^}]*\} 1$/m);
    });
  });

  it("onFinish throws: it was called once, nothing after it, and the longer request still finishes", async () => {
    const { s, lines } = await start();
    const bad = throwingSink(["onFinish"]);
    const good = recordingSink();
    s.core.submit(request("bad", 2), bad.sink);
    s.core.submit(request("good", 8), good);
    await expect(good.done).resolves.toBe("length");
    expect(bad.ends()).toEqual([["onFinish", "length"]]);
    expect(sinkErrorLines(lines)).toHaveLength(1);
    await expectServingWithNothingLeaked(s);
  });

  it("onError throws on an out-of-memory abort: called once, and the other request finishes", async () => {
    // The fake scheduler aborts the first running request (bad) at the third decode step with status 500.
    const { s, lines } = await start({ oomAbortAtStep: 3 });
    const bad = throwingSink(["onError"]);
    const good = recordingSink();
    s.core.submit(request("bad", 8), bad.sink);
    s.core.submit(request("good", 8), good);
    await expect(good.done).resolves.toBe("length");
    expect(bad.ends()).toEqual([["onError", expect.stringMatching(/^Out of memory/)]]);
    expect(sinkErrorLines(lines)).toHaveLength(1);
    await expectServingWithNothingLeaked(s);
  });

  it("onText and then onError throw: onError is called once (no recursion), the other request finishes", async () => {
    const { s, lines } = await start();
    const bad = throwingSink(["onText", "onError"]);
    const good = recordingSink();
    s.core.submit(request("bad", 8), bad.sink);
    s.core.submit(request("good", 8), good);
    await expect(good.done).resolves.toBe("length");
    expect(bad.calls.filter(([m]) => m === "onText")).toHaveLength(1);
    expect(bad.ends()).toEqual([["onError", expect.stringMatching(/GenerationSink\.onText threw/)]]);
    expect(sinkErrorLines(lines)).toHaveLength(2); // onText's, then onError's: one line each
    await expectServingWithNothingLeaked(s);
  });

  it("onText calls the request's own abort function, then throws: the sink hears nothing after its abort", async () => {
    const { s, lines } = await start();
    const calls: Array<keyof GenerationSink> = [];
    let abort = () => {};
    const sink: GenerationSink = {
      onText() {
        calls.push("onText");
        abort(); // e.g. a package user's sink that has read enough, and then fails on its own bookkeeping
        throw new Error("package user's bug in onText");
      },
      onFinish: () => calls.push("onFinish"),
      onError: () => calls.push("onError"),
    };
    abort = s.core.submit(request("bad", 8), sink);
    const good = recordingSink();
    s.core.submit(request("good", 8), good);
    await expect(good.done).resolves.toBe("length");
    // GenerationSink's contract: no method at all after the request's abort function was called.
    expect(calls).toEqual(["onText"]);
    expect(sinkErrorLines(lines)).toHaveLength(1);
    expect(lines.filter((l) => /Abort request bad/.test(l))).toHaveLength(1);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/^sglang:num_aborted_requests_total\{[^}]*\} 1$/m);
    await expectServingWithNothingLeaked(s);
  });

  it("onError throws at close: close still resolves and every other in-flight request hears of it", async () => {
    const { s } = await start();
    const bad = throwingSink(["onError"]);
    const first = recordingSink();
    const last = recordingSink();
    s.core.submit(request("first", 1000), first);
    s.core.submit(request("bad", 1000), bad.sink);
    s.core.submit(request("last", 1000), last);
    await s.close();
    server = undefined;
    await expect(first.done).rejects.toThrow(/shutting down/);
    await expect(last.done).rejects.toThrow(/shutting down/);
    expect(bad.ends()).toEqual([["onError", expect.stringMatching(/shutting down/)]]);
  });
});
