import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptionsFromSettings, routerSettingsSchema } from "../../../src/core/router-schema";
import { prometheusText } from "../../../src/edge/prometheus";

const readme = readFileSync(resolve(import.meta.dirname, "../../../README.md"), "utf8");
/** README's "Edge metrics" section: where an operator looks a metric up (not a mention elsewhere in the README). */
const section = readme.slice(readme.indexOf("### Edge metrics"), readme.indexOf("### Edge logs"));

/** `/spillway/metrics` for a router with the Worker's defaults, one request placed and one tenant counted. */
function exposition(): string {
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
  return text;
}

/** Each family's labels beyond `deployment`, `shard` and a histogram's `le`, from its samples. */
function familyLabels(text: string): Map<string, string[]> {
  const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);
  const labels = new Map<string, string[]>(families.map((f) => [f, []]));
  for (const [, name = "", body = ""] of text.matchAll(/^([a-z_]+)\{([^}]*)\}/gm)) {
    const family = families.find((f) => [f, `${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name)) ?? name;
    const names = [...body.matchAll(/([a-z_]+)="/g)].map((m) => m[1] as string);
    const own = names.filter((n) => n !== "deployment" && n !== "shard" && n !== "le");
    labels.set(family, [...new Set([...(labels.get(family) ?? []), ...own])].sort());
  }
  return labels;
}

describe("README's edge metrics", () => {
  const labels = familyLabels(exposition());
  const families = [...labels.keys()];

  it("names every metric family the router exports", () => {
    // The ledger's, the tenants' and the quotas' families are among them (the default policy, a tenant, a quota).
    expect(families).toEqual(
      expect.arrayContaining([
        "spillway_booking_trust",
        "spillway_tenant_admitted_total",
        "spillway_tenant_tokens_charged_total",
      ]),
    );
    // In the section itself: spillway_hinted_retries_total and spillway_demoted_total were named only in passing
    // elsewhere (a configuration row, the slot hand-off), their labels nowhere.
    expect(families.filter((name) => !section.includes(`\`${name}`))).toEqual([]);
  });

  it("gives each labelled family its labels, as `name{label,...}`", () => {
    const documented = (name: string) =>
      [...section.matchAll(new RegExp(`\`${name}\\{([^}]*)\\}`, "g"))].map((m) =>
        (m[1] as string)
          .split(",")
          .map((l) => l.replace(/=.*$/, "").trim())
          .sort(),
      );
    const wrong = [...labels]
      .filter(([, own]) => own.length > 0)
      .filter(([name, own]) => !documented(name).some((d) => d.join(",") === own.join(",")))
      .map(([name, own]) => `${name}{${own.join(",")}}`);
    expect(wrong).toEqual([]);
  });
});
