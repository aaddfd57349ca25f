import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptionsFromSettings, routerSettingsSchema } from "../../../src/core/router-schema";
import { prometheusText } from "../../../src/edge/prometheus";

const readme = readFileSync(resolve(import.meta.dirname, "../../../README.md"), "utf8");

/** The metric families `/spillway/metrics` declares (`# TYPE` lines) for a router with the Worker's defaults. */
function declaredFamilies(): string[] {
  let now = 0;
  const core = new RouterCore(
    routerOptionsFromSettings(["http://127.0.0.1:1"], routerSettingsSchema.parse({})),
    { now: () => now },
    () => 0.5,
  );
  // One request placed and one tenant counted, so that every per-replica and per-tenant family has a sample.
  core.submit("t1", { tenant: "acme", priority: "interactive", weight: 1 });
  const plan = core.beginRound();
  if (plan) {
    for (const r of plan.probe) core.reportProbe(r, 0);
    core.finishRound(plan);
  }
  now += 1000;
  const text = prometheusText(
    [
      {
        ...core.stats(),
        deployment: "d",
        shard: 0,
        internal: { waiters: 0, recentlyCancelled: 0, pendingObservations: 0 },
        calls: { acquire: 1, releaseCalls: 0, slotsReleased: 0, handedOff: 0 },
      },
    ],
    { acme: { admitted: 1, refused: 0, tokensCharged: 10, tokensRefunded: 2 } },
  );
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);
}

describe("README's edge metrics", () => {
  const families = declaredFamilies();

  it("names every metric family the router exports", () => {
    // The ledger's, the tenants' and the quotas' families are among them (the default policy, a tenant, a quota).
    expect(families).toEqual(
      expect.arrayContaining([
        "spillway_booking_trust",
        "spillway_tenant_admitted_total",
        "spillway_tenant_tokens_charged_total",
      ]),
    );
    expect(families.filter((name) => !readme.includes(`\`${name}`))).toEqual([]);
  });
});
