import { describe, expect, it } from "vitest";
import { CliError, engineHelp, parseEngineArgs } from "../../../src/engine/cli";
import { LLAMA_DEFAULT_SEQUENCES } from "../../../src/engine/llama/llama-backend";
import { eosAfterTokens } from "../../../src/engine/output-length-model";
import { StopMatcher } from "../../../src/engine/stop-matcher";
import { batchSeconds, decodeStepSeconds, defaultTimingModel, prefillSeconds } from "../../../src/engine/timing-model";
import { Scheduler } from "../../../src/scheduler/index";

describe("timing model", () => {
  it("is calibrated to the seed: ~24 ms per decode step at batch 5, ~3,900 prefill tok/s", () => {
    expect(decodeStepSeconds(defaultTimingModel, { batchSize: 5, tokensInBatch: 2560 })).toBeCloseTo(0.024, 3);
    expect(1280 / prefillSeconds(defaultTimingModel, { extendTokens: 1280 })).toBeGreaterThan(3700);
  });
  it("grows with batch size and tokens, divides by speed, and is free at speed inf", () => {
    const t = defaultTimingModel;
    expect(decodeStepSeconds(t, { batchSize: 10, tokensInBatch: 2560 })).toBeGreaterThan(
      decodeStepSeconds(t, { batchSize: 5, tokensInBatch: 2560 }),
    );
    expect(decodeStepSeconds(t, { batchSize: 5, tokensInBatch: 9000 })).toBeGreaterThan(
      decodeStepSeconds(t, { batchSize: 5, tokensInBatch: 2560 }),
    );
    expect(decodeStepSeconds({ ...t, speed: 10 }, { batchSize: 5, tokensInBatch: 2560 })).toBeCloseTo(0.0024, 4);
    expect(decodeStepSeconds({ ...t, speed: Number.POSITIVE_INFINITY }, { batchSize: 5, tokensInBatch: 2560 })).toBe(0);
    expect(prefillSeconds({ ...t, speed: Number.POSITIVE_INFINITY }, { extendTokens: 100 })).toBe(0);
  });
});

describe("batchSeconds: a scheduler batch's step time", () => {
  it("prices a prefill batch by its extend tokens and a decode step by its size and held tokens", () => {
    const s = new Scheduler({ maxTotalTokens: 10_000 });
    s.submit({ id: "a", promptTokenIds: Array.from({ length: 300 }, (_, i) => i), maxNewTokens: 4 });
    s.submit({ id: "b", promptTokenIds: Array.from({ length: 200 }, (_, i) => 1000 + i), maxNewTokens: 4 });
    const prefill = s.nextBatch(0);
    if (prefill.kind !== "prefill") throw new Error(`expected a prefill batch, got ${prefill.kind}`);
    expect(batchSeconds(defaultTimingModel, prefill)).toBe(prefillSeconds(defaultTimingModel, { extendTokens: 500 }));
    s.completeBatch({ tokenIds: [7, 7] });
    const decode = s.nextBatch(0.1);
    if (decode.kind !== "decode") throw new Error(`expected a decode batch, got ${decode.kind}`);
    // Two sequences holding 300 + 1 and 200 + 1 tokens.
    expect(batchSeconds(defaultTimingModel, decode)).toBe(
      decodeStepSeconds(defaultTimingModel, { batchSize: 2, tokensInBatch: 502 }),
    );
  });
});

describe("output-length model", () => {
  it("is seeded and stays within its range", () => {
    const m = { kind: "uniform" as const, minFraction: 0.1, maxFraction: 0.5, seed: 7 };
    const draws = Array.from({ length: 200 }, (_, i) => eosAfterTokens(m, { requestKey: i, maxTokens: 100 }));
    expect(draws).toEqual(Array.from({ length: 200 }, (_, i) => eosAfterTokens(m, { requestKey: i, maxTokens: 100 })));
    for (const d of draws) {
      expect(d).not.toBeNull();
      expect(d as number).toBeGreaterThanOrEqual(10);
      expect(d as number).toBeLessThanOrEqual(50);
    }
    expect(new Set(draws).size).toBeGreaterThan(20);
    expect(eosAfterTokens({ kind: "never", seed: 1 }, { requestKey: 0, maxTokens: 10 })).toBeNull();
    expect(eosAfterTokens({ ...m, minFraction: 1, maxFraction: 1 }, { requestKey: 0, maxTokens: 10 })).toBeNull();
  });
});

describe("stop matcher", () => {
  it("holds back a possible stop prefix and cuts at the stop", () => {
    const m = new StopMatcher(["\n\n"]);
    expect(m.push("hello\n")).toEqual({ text: "hello", stopped: false });
    expect(m.push("\nworld")).toEqual({ text: "", stopped: true });
    const n = new StopMatcher(["END"]);
    expect(n.push("abcE")).toEqual({ text: "abc", stopped: false });
    expect(n.push("x")).toEqual({ text: "Ex", stopped: false });
    expect(n.push("yEN")).toEqual({ text: "y", stopped: false });
    expect(n.flush()).toBe("EN");
  });
});

describe("engine CLI", () => {
  it("parses SGLang's flags and environment variables", () => {
    const o = parseEngineArgs(
      [
        "--port",
        "0",
        "--max-total-tokens",
        "4096",
        "--disable-radix-cache",
        "--speed",
        "inf",
        "--schedule-policy",
        "lpm",
      ],
      {
        SGLANG_INIT_NEW_TOKEN_RATIO: "0.5",
        SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION: "1024",
      },
    );
    expect(o).toMatchObject({
      port: 0,
      maxTotalTokens: 4096,
      disableRadixCache: true,
      speed: Number.POSITIVE_INFINITY,
      schedulePolicy: "lpm",
      initNewTokenRatio: 0.5,
      clipMaxNewTokensEstimation: 1024,
      decodeLogInterval: 40,
    });
    expect(parseEngineArgs(["--help"])).toBe("help");
  });
  it("rejects bad flags with messages naming them", () => {
    expect(() => parseEngineArgs(["--max-total-tokens", "lots"])).toThrow(/--max-total-tokens: expected a number/);
    // A value out of the schema's range is said in words with what was given (not zod's "Too small: ...").
    expect(() => parseEngineArgs(["--max-total-tokens", "0"])).toThrow(
      /^--max-total-tokens: must be at least 2, got 0$/,
    );
    expect(() => parseEngineArgs(["--page-size", "1.5"])).toThrow(/--page-size: expected an integer/);
    expect(() => parseEngineArgs(["--schedule-policy", "lifo"])).toThrow(
      /^--schedule-policy: expected one of "fcfs", "lpm", "lof", "random", got "lifo"$/,
    );
    expect(() => parseEngineArgs(["--bogus"])).toThrow(CliError);
    expect(() => parseEngineArgs([], { SGLANG_INIT_NEW_TOKEN_RATIO: "x" })).toThrow(/SGLANG_INIT_NEW_TOKEN_RATIO/);
  });
  it("refuses --engine llama with a --page-size other than 1 as a bad flag (status 2), not at startup", () => {
    const llama = ["--engine", "llama", "--model-path", "model.gguf"];
    expect(() => parseEngineArgs([...llama, "--page-size", "16"])).toThrow(CliError);
    expect(() => parseEngineArgs([...llama, "--page-size", "16"])).toThrow(/^--page-size: --engine llama needs/);
    expect(parseEngineArgs([...llama, "--page-size", "1"])).toMatchObject({ engine: "llama", pageSize: 1 });
    expect(parseEngineArgs(["--page-size", "16"])).toMatchObject({ engine: "simulated", pageSize: 16 });
  });
  it("names both ways to run it in --help: the package's command and the repository's script", () => {
    const usage = engineHelp().split("\n")[0];
    expect(usage).toMatch(/^Usage: spillway-engine \[flags\]/);
    expect(usage).toContain("npm run engine -- [flags]");
  });
  it("gives --max-running-requests' default with --engine llama in --help (its sequences, not the pool's rule)", () => {
    const line = engineHelp()
      .split("\n")
      .find((l) => l.includes("--max-running-requests"));
    expect(line).toContain(`--engine llama: ${LLAMA_DEFAULT_SEQUENCES} sequences`);
  });
  it("gives --context-length's default with --engine llama in --help (the model's own context)", () => {
    const line = engineHelp()
      .split("\n")
      .find((l) => l.includes("--context-length"));
    expect(line).toContain("--engine llama: the model's context_length, at most max-total-tokens");
  });
  it("documents every flag in --help", () => {
    const help = engineHelp();
    for (const flag of [
      "--host",
      "--port",
      "--max-total-tokens",
      "--max-running-requests",
      "--max-prefill-tokens",
      "--chunked-prefill-size",
      "--schedule-conservativeness",
      "--schedule-policy",
      "--disable-radix-cache",
      "--page-size",
      "--log-level",
      "--decode-log-interval",
      "--served-model-name",
      "--speed",
      "SGLANG_RETRACT_DECODE_STEPS",
    ])
      expect(help).toContain(flag);
  });
});
