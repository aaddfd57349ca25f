import { describe, expect, it } from "vitest";
import { isDevProxyRestart } from "../../../src/bench/soak/run-soak";

const PROXY_TEXT =
  "Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically.";

describe("isDevProxyRestart (the soak tells wrangler dev's proxy's 503 from spillway's answers)", () => {
  it("recognises the proxy's answer", () => {
    const res = new Response(PROXY_TEXT, { status: 503, headers: { "retry-after": "0" } });
    expect(isDevProxyRestart(res, PROXY_TEXT)).toBe(true);
  });

  it("never takes one of spillway's refusals for it, with a hint or without", () => {
    const body = JSON.stringify({ error: { message: "all replicas are down", type: "server_error", code: null } });
    const hinted = new Response(body, { status: 503, headers: { "retry-after": "2", "retry-after-ms": "2000" } });
    const bare = new Response(body, { status: 503 });
    const zero = new Response(body, { status: 503, headers: { "retry-after": "0", "retry-after-ms": "0" } });
    expect(isDevProxyRestart(hinted, body)).toBe(false);
    expect(isDevProxyRestart(bare, body)).toBe(false);
    expect(isDevProxyRestart(zero, body)).toBe(false);
    // The same text with another status, or with spillway's millisecond header, is not the proxy's either.
    expect(
      isDevProxyRestart(new Response(PROXY_TEXT, { status: 500, headers: { "retry-after": "0" } }), PROXY_TEXT),
    ).toBe(false);
  });
});
