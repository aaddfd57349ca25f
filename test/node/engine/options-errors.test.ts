import { describe, expect, it } from "vitest";
import { spillwayConfigSchema } from "../../../src/edge/config";
import {
  EngineOptionsError,
  type EngineOptionsInput,
  parseEngineOptions,
  startEngineServer,
} from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

/** What startEngineServer rejects with for `options` (it validates before it listens: nothing starts). */
async function refusal(options: Record<string, unknown>): Promise<EngineOptionsError> {
  const error = await startEngineServer({ log: () => {}, ...(options as EngineOptionsInput) }).then(
    async (server) => {
      await server.close();
      throw new Error("started");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineOptionsError);
  return error as EngineOptionsError;
}

describe("startEngineServer's refusal of bad options", () => {
  it("names the option and the value, one line, not zod's JSON list of issues", async () => {
    const error = await refusal({ port: "abc" });
    expect(error.message).toBe('startEngineServer: port: expected a number, got "abc"');
    expect(error.name).toBe("EngineOptionsError");
    expect(error.issues).toMatchObject([{ code: "invalid_type", path: ["port"] }]);
  });

  it("refuses an unknown key by name, suggesting the option it misspells", async () => {
    const error = await refusal({ decodePerKtokenMs: 1 });
    expect(error.message).toBe("startEngineServer: unknown option decodePerKtokenMs (did you mean decodePerKTokenMs?)");
  });

  it("gives one line per problem", async () => {
    const error = await refusal({ port: 70000, accessLog: "no", disableAccessLog: true, bogus: 1 });
    expect(error.message.split("\n").sort()).toEqual(
      [
        "startEngineServer: port: must be at most 65535, got 70000",
        'startEngineServer: accessLog: expected true or false, got "no"',
        "startEngineServer: unknown option disableAccessLog (did you mean accessLog: false?)",
        "startEngineServer: unknown option bogus",
      ].sort(),
    );
  });
});

describe("parseEngineOptions", () => {
  it.each([
    [{ schedulePolicy: "x" }, 'schedulePolicy: expected one of "fcfs", "lpm", "lof", "random", got "x"'],
    [{ speed: -1 }, "speed: must be greater than 0, got -1"],
    [{ speed: "fast" }, 'speed: expected a number or Infinity, got "fast"'],
    [{ maxTotalTokens: 1.5 }, "maxTotalTokens: expected an integer, got 1.5"],
    [{ host: "" }, 'host: must not be empty, got ""'],
    [{ chunkedPrefillSize: 0 }, "chunkedPrefillSize: must be -1 (off) or at least 1, got 0"],
    [{ eosMinFraction: 0.9, eosMaxFraction: 0.1 }, "eosMinFraction: eosMinFraction must not exceed eosMaxFraction"],
    [null, "options: expected an object, got null"],
  ])("%j -> %s", (input, line) => {
    let thrown: unknown;
    try {
      parseEngineOptions(input, "engine");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EngineOptionsError);
    expect((thrown as Error).message).toBe(`engine: ${line}`);
  });

  it("applies the defaults to good options", () => {
    expect(parseEngineOptions({ port: 0 })).toMatchObject({ port: 0, host: "127.0.0.1", maxTotalTokens: 32768 });
  });
});

describe("the default body limit", () => {
  const edgeLimit = spillwayConfigSchema.parse({
    deployments: { m: { replicas: ["http://127.0.0.1:8001"] } },
  }).maxBodyBytes;

  it("is the edge's default maxBodyBytes (16 MiB)", () => {
    expect(edgeLimit).toBe(16 * 1024 * 1024);
    expect(parseEngineOptions({ port: 0 }).maxBodyBytes).toBe(edgeLimit);
  });

  it("reads a body as large as the edge admits by default, and refuses one byte more with 413", async () => {
    // Was 8 MiB: the demo stack's engine refused with 413 what the edge had admitted and queued.
    const server = await startEngineServer({ port: 0, speed: 1000, createScheduler: fakeScheduler(), log: () => {} });
    try {
      const head = '{"model":"no-such-model","prompt":"x","pad":"';
      const body = (size: number) => `${head}${"a".repeat(size - head.length - 2)}"}`;
      const post = (text: string) =>
        fetch(`${server.url}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: text,
        });
      const admitted = await post(body(edgeLimit));
      const answer = await admitted.text();
      expect(admitted.status, answer).toBe(404);
      expect(answer).toContain("model_not_found");
      const over = await post(body(edgeLimit + 1));
      expect(over.status).toBe(413);
      await over.arrayBuffer();
    } finally {
      await server.close();
    }
  });
});
