import { describe, expect, it } from "vitest";
import { openAIDuration, rateLimitHeaders } from "../../src/edge/rate-limit-headers";
import { usageOfEventStream, usageOfJson } from "../../src/edge/response-usage";
import { estimateTokens } from "../../src/edge/tenant-quota-charge";
import { withTenantHeaders } from "../../src/edge/tenant-response";

describe("rate-limit headers", () => {
  it("writes durations as OpenAI does (Go's format)", () => {
    expect([0, 20, 999, 1000, 1500, 59_950, 60_000, 360_000, 3_600_000].map(openAIDuration)).toEqual([
      "0ms",
      "20ms",
      "999ms",
      "1s",
      "1.5s",
      "59.95s",
      "1m0s",
      "6m0s",
      "1h0m0s",
    ]);
  });

  it("carries OpenAI's six headers and the IETF fields for both quotas", () => {
    const headers = rateLimitHeaders({
      requests: { limit: 60, remaining: 59, resetMs: 1000 },
      tokens: { limit: 150_000, remaining: 149_000, resetMs: 400 },
    });
    expect(headers).toEqual({
      "x-ratelimit-limit-requests": "60",
      "x-ratelimit-remaining-requests": "59",
      "x-ratelimit-reset-requests": "1s",
      "x-ratelimit-limit-tokens": "150000",
      "x-ratelimit-remaining-tokens": "149000",
      "x-ratelimit-reset-tokens": "400ms",
      "ratelimit-policy": '"requests";q=60;w=60, "tokens";q=150000;w=60',
      ratelimit: '"requests";r=59;t=1, "tokens";r=149000;t=1',
    });
    expect(rateLimitHeaders({})).toEqual({});
  });

  it("with one quota, carries its three headers and only its IETF items", () => {
    expect(rateLimitHeaders({ requests: { limit: 30, remaining: 29, resetMs: 2000 } })).toEqual({
      "x-ratelimit-limit-requests": "30",
      "x-ratelimit-remaining-requests": "29",
      "x-ratelimit-reset-requests": "2s",
      "ratelimit-policy": '"requests";q=30;w=60',
      ratelimit: '"requests";r=29;t=2',
    });
    expect(rateLimitHeaders({ tokens: { limit: 1000, remaining: 0, resetMs: 1500 } })).toEqual({
      "x-ratelimit-limit-tokens": "1000",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "1.5s",
      "ratelimit-policy": '"tokens";q=1000;w=60',
      ratelimit: '"tokens";r=0;t=2',
    });
  });

  it("puts them on a response: in place, or on a copy when its headers are immutable", async () => {
    const headers = rateLimitHeaders({ requests: { limit: 30, remaining: 29, resetMs: 2000 } });
    const mutable = new Response("ok", { headers: { "content-type": "text/plain" } });
    expect(withTenantHeaders(mutable, headers)).toBe(mutable);
    expect(mutable.headers.get("x-ratelimit-remaining-requests")).toBe("29");
    const immutable = Response.redirect("https://example.com/", 302); // a Response whose headers are immutable
    const copy = withTenantHeaders(immutable, headers);
    expect(copy).not.toBe(immutable);
    expect(copy.status).toBe(302);
    expect(copy.headers.get("location")).toBe("https://example.com/");
    expect(copy.headers.get("ratelimit")).toBe('"requests";r=29;t=2');
    expect(withTenantHeaders(immutable, {})).toBe(immutable);
  });
});

describe("usage and token estimates", () => {
  it("reads total_tokens from a JSON answer and from the last usage event of a stream", () => {
    expect(usageOfJson(new TextEncoder().encode('{"usage":{"total_tokens":42}}'))).toBe(42);
    expect(usageOfJson(new TextEncoder().encode("{}"))).toBeUndefined();
    expect(usageOfJson(new TextEncoder().encode("not json"))).toBeUndefined();
    const stream = 'data: {"choices":[]}\n\ndata: {"choices":[],"usage":{"total_tokens":7}}\n\ndata: [DONE]\n\n';
    expect(usageOfEventStream(stream)).toBe(7);
    expect(usageOfEventStream('ata: {"usage":{"total_tokens":3}}\n\ndata: [DONE]')).toBeUndefined();
    expect(usageOfEventStream('data: {"usage":{"total_tokens":-1}}')).toBeUndefined();
  });

  it("charges the body at 4 characters a token plus max_tokens (or the default)", () => {
    expect(estimateTokens(40, 100, 1024)).toBe(110);
    expect(estimateTokens(41, undefined, 1024)).toBe(11 + 1024);
  });
});
