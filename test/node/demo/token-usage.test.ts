import { describe, expect, it } from "vitest";
import { DASHBOARD_JS } from "../../../src/edge/dashboard/client-script";
import { usagePercent } from "../../../src/edge/dashboard/token-usage";

describe("the dashboard's KV token usage", () => {
  it("is a percent with one decimal, or null when unknown", () => {
    expect(usagePercent(0.28125)).toBe(28.1);
    expect(usagePercent(0)).toBe(0);
    expect(usagePercent(1)).toBe(100);
    expect(usagePercent(0.0004)).toBe(0);
    expect(usagePercent(null)).toBeNull();
    expect(usagePercent(Number.NaN)).toBeNull();
  });

  it("the chart and the table both go through it: one unit, one rounding", () => {
    // The browser script runs the same function (embedded), and nothing else turns the fraction into a percent.
    expect(DASHBOARD_JS).not.toMatch(/tokenUsage\s*\*\s*100/);
    expect(DASHBOARD_JS.match(/usagePercent\(r\.tokenUsage\)/g)).toHaveLength(2);
    const source = /var usagePercent = ([\s\S]*?);\s*function fmt\(/.exec(DASHBOARD_JS)?.[1];
    expect(source).toBeDefined();
    const embedded = new Function(`return (${source});`)() as (f: number | null) => number | null;
    for (const f of [0.28125, 0.005, 0.9996, null]) expect(embedded(f)).toBe(usagePercent(f));
  });
});
