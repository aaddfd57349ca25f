import { describe, expect, it } from "vitest";
import { ReplayGuard, type SignedParts, signRequest, verifyRequest } from "../../../src/core/request-signature";

const parts = (over: Partial<SignedParts> = {}): SignedParts => ({
  method: "POST",
  path: "/v1/chat/completions",
  body: '{"model":"m"}',
  deployment: "m",
  timestampMs: 1_000_000,
  nonce: "n-1",
  ...over,
});

async function check(
  headers: Record<string, string>,
  request = { method: "POST", path: "/v1/chat/completions", body: '{"model":"m"}' },
  now = 1_000_000,
  guard = new ReplayGuard(30_000),
  secrets = ["secret"],
) {
  return verifyRequest(secrets, new Headers(headers), request, now, guard, 30_000);
}

describe("request signatures", () => {
  it("accepts a fresh signature and names the deployment", async () => {
    expect(await check(await signRequest("secret", parts()))).toEqual({ ok: true, deployment: "m" });
  });

  it.each([
    ["body", { body: '{"model":"x"}' }],
    ["path", { path: "/v1/completions" }],
    ["method", { method: "PUT" }],
  ])("refuses a signature when the %s changed", async (_what, change) => {
    const headers = await signRequest("secret", parts());
    const request = { method: "POST", path: "/v1/chat/completions", body: '{"model":"m"}', ...change };
    expect(await check(headers, request)).toEqual({ ok: false, failure: "invalid" });
  });

  it("refuses another secret, a stale or future timestamp, missing and malformed headers", async () => {
    expect(await check(await signRequest("other", parts()))).toMatchObject({ failure: "invalid" });
    const headers = await signRequest("secret", parts());
    expect(await check(headers, undefined, 1_000_000 + 30_001)).toMatchObject({ failure: "expired" });
    expect(await check(headers, undefined, 1_000_000 - 30_001)).toMatchObject({ failure: "expired" });
    expect(await check({})).toMatchObject({ failure: "missing" });
    expect(await check({ ...headers, "x-spillway-signature": "not base64!" })).toMatchObject({ failure: "malformed" });
    expect(await check({ ...headers, "x-spillway-timestamp": "1e6" })).toMatchObject({ failure: "malformed" });
  });

  it("refuses a replayed request", async () => {
    const guard = new ReplayGuard(30_000);
    const headers = await signRequest("secret", parts());
    expect(await check(headers, undefined, 1_000_000, guard)).toMatchObject({ ok: true });
    expect(await check(headers, undefined, 1_000_000, guard)).toMatchObject({ failure: "replayed" });
  });

  it("accepts the previous secret during a rotation", async () => {
    const headers = await signRequest("old", parts());
    expect(await check(headers, undefined, 1_000_000, new ReplayGuard(30_000), ["new", "old"])).toMatchObject({
      ok: true,
    });
  });

  it("forgets nonces older than the window, keeping memory bounded", () => {
    const guard = new ReplayGuard(1_000);
    for (let i = 0; i < 100; i++) guard.firstSeen(`n${i}`, i * 100);
    expect(guard.size).toBeLessThanOrEqual(21);
  });
});
