import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type GenerationRequest,
  type GenerationSink,
  type RunningEngineServer,
  startEngineServer,
} from "../../../src/engine/index";
import { recordingSink } from "../../support/recording-sink";

const valid = (id: string): GenerationRequest => ({
  id,
  promptTokens: [1, 2, 3],
  maxTokens: 3,
  ignoreEos: false,
  stop: [],
});

// The engine's programmatic entry (`startEngineServer(...).core.submit`, exported by spillway-engine): the HTTP API
// validates bodies with zod, but a package user calling submit from JavaScript has only the type. A wrong value must
// be refused by name before anything is queued, and leave the engine serving everyone else.
describe("EngineCore.submit refuses a malformed request from a package user", () => {
  let server: RunningEngineServer;
  beforeAll(async () => {
    // EOS never comes: a request ends at max_tokens with "length", whether or not it ignores EOS.
    server = await startEngineServer({
      port: 0,
      maxTotalTokens: 4096,
      speed: 1000,
      eosDistribution: "never",
      log: () => {},
    });
  });
  afterAll(() => server.close());

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      "ignoreEos as a string",
      { ignoreEos: "false" },
      /GenerationRequest\.ignoreEos must be a boolean, got string "false"/,
    ],
    ["ignoreEos left out", { ignoreEos: undefined }, /GenerationRequest\.ignoreEos must be a boolean, got undefined/],
    ["id as a number", { id: 42 }, /GenerationRequest\.id must be a string, got number 42/],
    ["id left out", { id: undefined }, /GenerationRequest\.id must be a string, got undefined/],
    ["stop left out", { stop: undefined }, /GenerationRequest\.stop must be an array of strings, got undefined/],
    ["stop as a string", { stop: "\n" }, /GenerationRequest\.stop must be an array of strings/],
  ];
  for (const [name, change, message] of bad) {
    it(`${name}: a TypeError naming the field, nothing queued, and the same id then accepted`, async () => {
      const id = `bad-${name}`;
      const request = { ...valid(id), ...change } as unknown as GenerationRequest;
      expect(() => server.core.submit(request, recordingSink())).toThrow(TypeError);
      expect(() => server.core.submit(request, recordingSink())).toThrow(message);
      expect(server.core.load().queueLength).toBe(0);
      const sink = recordingSink();
      server.core.submit(valid(id), sink);
      await expect(sink.done).resolves.toBe("length");
    });
  }

  it("a sink without onFinish is refused, and the engine loop goes on serving", async () => {
    const { onFinish: _, ...noFinish } = recordingSink();
    expect(() => server.core.submit(valid("no-finish"), noFinish as unknown as GenerationSink)).toThrow(
      /GenerationSink\.onFinish must be a function, got undefined/,
    );
    const sink = recordingSink();
    server.core.submit(valid("after-no-finish"), sink);
    await expect(sink.done).resolves.toBe("length");
  });
});
