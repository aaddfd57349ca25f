import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/edge/config";

const sha256 = (key: string) => createHash("sha256").update(key).digest("hex");

describe("the demo's tenants (wrangler.toml's sample configuration)", () => {
  const sample = /^SPILLWAY_CONFIG = '(.*)'$/m.exec(readFileSync("wrangler.toml", "utf8"))?.[1] as string;
  const config = parseConfig(sample);

  it("has the three demo keys, by their SHA-256 only, and keeps serving requests without a key", () => {
    const plan = (key: string) => config.tenants.keys[sha256(key)];
    expect(plan("sk-demo-alpha")).toMatchObject({ name: "alpha", weight: 1, priority: "interactive" });
    expect(plan("sk-demo-beta")).toMatchObject({ name: "beta", weight: 1, priority: "interactive" });
    expect(plan("sk-demo-alpha")?.requestsPerMinute).toBeUndefined();
    expect(plan("sk-demo-small")).toMatchObject({ name: "small", requestsPerMinute: 30 });
    expect(config.tenants.requireKey).toBe(false);
    expect(sample).not.toContain("sk-demo");
  });
});
