import { describe, expect, it } from "vitest";
import { requestFingerprint, shardForFingerprint } from "../../../src/core/request-fingerprint";

const base = { authorization: "Bearer sk-a", method: "POST", path: "/v1/chat/completions", body: '{"model":"m"}' };

describe("request fingerprint", () => {
  it("is the same for every attempt of a request, whatever else the client sends", async () => {
    const a = await requestFingerprint(base);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await requestFingerprint({ ...base, method: "post" })).toBe(a);
    expect(await requestFingerprint({ ...base, body: new TextEncoder().encode(base.body) })).toBe(a);
  });

  it("differs with the credential, the method, the path or the body", async () => {
    const a = await requestFingerprint(base);
    const others = await Promise.all([
      requestFingerprint({ ...base, authorization: "Bearer sk-b" }),
      requestFingerprint({ ...base, authorization: undefined }),
      requestFingerprint({ ...base, method: "PUT" }),
      requestFingerprint({ ...base, path: "/v1/completions" }),
      requestFingerprint({ ...base, body: '{"model":"n"}' }),
    ]);
    expect(new Set([a, ...others]).size).toBe(6);
  });

  it("length-prefixes its parts: moving text between the path and the credential changes it", async () => {
    const a = await requestFingerprint({ ...base, authorization: "x", path: "y/z" });
    const b = await requestFingerprint({ ...base, authorization: "xy", path: "/z" });
    expect(a).not.toBe(b);
  });

  it("picks a shard from its first 32 bits; one shard is always 0", () => {
    expect(shardForFingerprint("00000005ffff", 4)).toBe(1);
    expect(shardForFingerprint("ffffffff0000", 16)).toBe(15);
    expect(shardForFingerprint("abcdef", 1)).toBe(0);
  });
});
