import { SELF } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../support/edge-test-config";
import { propertyRuns } from "../support/property-runs";
import { stats0 } from "./helpers";

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const oddNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.5, -1),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
);
const field = fc.oneof(jsonValue, oddNumber, fc.string({ unit: "binary" }), fc.constant(undefined));
const message = fc.record({ role: field, content: field }, { requiredKeys: [] });

/** Bodies from plausible to hostile: OpenAI-shaped with wrong types, random JSON, random bytes. */
const body = fc.oneof(
  fc
    .record(
      {
        model: fc.oneof(fc.constant("misc"), field),
        messages: fc.oneof(fc.array(message, { maxLength: 3 }), field),
        prompt: field,
        stream: fc.oneof(fc.boolean(), field),
        max_tokens: fc.oneof(oddNumber, field),
        temperature: field,
        service_tier: fc.oneof(fc.constantFrom("auto", "default", "flex", "priority", "scale"), field),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  jsonValue.map((v) => JSON.stringify(v)),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc
    .string({ unit: "grapheme", maxLength: 50 })
    .map((s) => `{"model":"misc","messages":[{"role":"user","content":"${s}"}]}`),
);
const headerValue = (maxLength: number) =>
  fc.string({ unit: "grapheme-ascii", maxLength }).map((s) => s.replace(/[\r\n]/g, ""));
/** API keys: the tests' tenants (one with a 3-per-minute quota), bearer junk, and other schemes. */
const authorization = fc.oneof(
  fc.constantFrom(...Object.values(TEST_KEYS)).map((key) => `Bearer ${key}`),
  headerValue(600).map((s) => `Bearer ${s}`),
  headerValue(40),
);
const headers = fc
  .tuple(
    fc.dictionary(
      fc.constantFrom("content-type", "x-spillway-signature", "x-spillway-deployment", "accept", "x-junk"),
      headerValue(40),
    ),
    fc.option(authorization, { nil: undefined }),
  )
  .map(([h, auth]) => (auth === undefined ? h : { ...h, authorization: auth }));

describe("bad input, fuzzed against the Worker", () => {
  it("answers every request with a well-formed 2xx or 4xx, and refused requests leave the router alone", async () => {
    const before = await stats0("misc");
    let served = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/v1/chat/completions", "/v1/completions"),
        body,
        headers,
        async (path, b, h) => {
          const res = await SELF.fetch(`http://spillway${path}`, { method: "POST", headers: h, body: b });
          const text = await res.text();
          expect(res.status, text).toBeLessThan(500);
          if (res.status >= 400) {
            const parsed = JSON.parse(text) as { error: { message: unknown; type: unknown } };
            expect(typeof parsed.error.message).toBe("string");
            expect(typeof parsed.error.type).toBe("string");
          } else {
            served += 1;
          }
        },
      ),
      propertyRuns(150, 20261129),
    );
    const after = await stats0("misc");
    expect(after.admitted - before.admitted).toBe(served);
    expect(after.rejections).toEqual(before.rejections);
    expect(after.queueDepth).toBe(0);
  });

  it("refuses an oversized body whatever it claims in content-length", async () => {
    const big = `{"model":"misc","messages":[{"role":"user","content":"${"a".repeat(80_000)}"}]}`;
    const res = await SELF.fetch("http://spillway/v1/chat/completions", {
      method: "POST",
      headers: { "content-length": "10" },
      body: big,
    });
    expect([400, 413]).toContain(res.status);
  });
});
