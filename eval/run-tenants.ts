/**
 * `npm run eval:tenants`: the tenant evaluation in the virtual-time simulator. Every case of
 * eval/tenants/scenarios.json runs with the same seeds under the fair queue (each request tagged with its tenant,
 * weight and class) and under the FIFO baseline (the same requests untagged: one shared FIFO queue), and the
 * noisy-neighbour case also with the quiet tenant alone; then the fair queue again on every case with 0 to 3 slots
 * of tenant headroom (`tenantHeadroomSlots`, src/core/tenant-headroom.ts), its gain beside its cost. Writes
 * docs/tenants.json and docs/tenants.md.
 *
 * Flags: --seeds <n> (default 3).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { DEFAULT_TENANT_HEADROOM_SLOTS, TENANT_ACTIVE_WINDOW_MS } from "../src/core/tenant-headroom";
import { measureCapacity } from "../src/sim/capacity";
import { jainIndex, maxMinFairShares } from "../src/sim/fairness";
import { placedAtFirstUnclaimedRelease } from "../src/sim/first-release-bound";
import { percentile } from "../src/sim/metrics";
import { EVAL_POLICIES } from "../src/sim/policies";
import { type Scenario, scenarioSchema } from "../src/sim/scenario";
import { runSimulation } from "../src/sim/simulation";
import { type TenantFigures, tenantFigures } from "../src/sim/tenant-metrics";
import { type TenantStream, tenantWorkload } from "../src/sim/tenant-workload";
import type { RequestTrace } from "../src/sim/trace";
import type { WorkloadRequest } from "../src/sim/workload";

interface CaseSpec {
  name: string;
  title: string;
  streams?: TenantStream[];
  zipf?: { tenants: number; exponent: number; totalLoad: number; durationS: number };
  /** Also run this tenant alone (its figures without the others). */
  alone?: string;
  /** Request sizes when not the base's (the scenario schema's `requests`); capacity is measured for them. */
  requests?: unknown;
}

type Variant = "fair" | "fifo" | "alone";

interface VariantResult {
  tenants: TenantFigures[];
  /**
   * Jain's index over served / min(demand, fair share), the mean over seeds; fair shares are the max-min fair split
   * (by weight) of what the fleet served in that run, so work served after the traffic (retries, the queue's
   * tail) counts in the capacity it is judged against.
   */
  jain: number;
  /** Batch's share of all refused attempts (cases with batch traffic). */
  batchRefusalShare: number | null;
  /**
   * From the first completion to the end of the traffic: batch responses completed / (capacity x that window -
   * interactive responses completed), i.e. how much of the capacity interactive work left batch used.
   */
  batchOfLeftover: number | null;
  /**
   * Cases with a quiet tenant: its p99 time to success had its requests gone first, each placed at the first slot
   * release after it reached the router that an earlier one did not take (src/sim/first-release-bound.ts), the
   * best any queue order could do.
   */
  quietPlacedAtFirstReleaseP99S: number | null;
  /**
   * Cases with a quiet tenant: responses completed (every tenant's) during the burst, the busiest phase of any
   * stream, per second, as a share of the fleet's capacity.
   */
  burstThroughputShare: number | null;
}

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const seedCount = commandFlags(
  "npm run eval:tenants -- [--seeds <n>]",
  { options: { seeds: { type: "string" } } },
  ({ values }) => positiveIntFlag("seeds", values.seeds, 3),
);
const spec = JSON.parse(readFileSync(join(root, "eval/tenants/scenarios.json"), "utf8")) as {
  base: unknown;
  cases: CaseSpec[];
};
const base = scenarioSchema.parse(spec.base);
const policy = EVAL_POLICIES.find((p) => p.id === "router_queue_drain_rate") as (typeof EVAL_POLICIES)[number];
const capacityRps = measureCapacity(base);

/** Zipf-skewed demand: tenant i (1-based) offers a share proportional to 1 / i^s of the total. */
function zipfStreams(z: NonNullable<CaseSpec["zipf"]>): TenantStream[] {
  const raw = Array.from({ length: z.tenants }, (_, i) => 1 / (i + 1) ** z.exponent);
  const sum = raw.reduce((s, x) => s + x, 0);
  return raw.map((r, i) => ({
    tenant: `T${i + 1}`,
    weight: 1,
    priority: "interactive",
    phases: [{ durationS: z.durationS, load: (z.totalLoad * r) / sum }],
  }));
}

function durationS(streams: readonly TenantStream[]): number {
  return Math.max(...streams.map((s) => s.phases.reduce((t, p) => t + p.durationS, 0)));
}

/** A case's scenario base (its own request sizes, if any) and the fleet's capacity measured for it. */
function caseBase(caseSpec: CaseSpec): { scenario: Scenario; capacityRps: number } {
  if (caseSpec.requests === undefined) return { scenario: base, capacityRps };
  const scenario = scenarioSchema.parse({ ...(spec.base as object), requests: caseSpec.requests });
  return { scenario, capacityRps: measureCapacity(scenario) };
}

/** The busiest phase of any stream (the burst), seconds from the start. */
function burstWindowS(streams: readonly TenantStream[]): { fromS: number; toS: number } {
  let best = { fromS: 0, toS: 0, load: Number.NEGATIVE_INFINITY };
  for (const stream of streams) {
    let t = 0;
    for (const phase of stream.phases) {
      if (phase.load > best.load) best = { fromS: t, toS: t + phase.durationS, load: phase.load };
      t += phase.durationS;
    }
  }
  return best;
}

/**
 * One variant of a case over every seed. `headroomSlots`: the routers' `tenantHeadroomSlots` (the sweep); absent,
 * the router schema's default.
 */
function runVariant(
  caseSpec: CaseSpec,
  sizedCase: { scenario: Scenario; capacityRps: number },
  streams: TenantStream[],
  variant: Variant,
  headroomSlots?: number,
): VariantResult {
  const { scenario: sized, capacityRps } = sizedCase;
  const chosen = variant === "alone" ? streams.filter((s) => s.tenant === caseSpec.alone) : streams;
  const trafficS = durationS(streams);
  const runs: Array<{ workload: WorkloadRequest[]; requests: RequestTrace[] }> = [];
  const jains: number[] = [];
  const quietBound: number[] = [];
  const burst = burstWindowS(streams);
  let burstCompletions = 0;
  const router = headroomSlots === undefined ? sized.router : { ...sized.router, tenantHeadroomSlots: headroomSlots };
  for (let k = 0; k < seedCount; k++) {
    const scenario: Scenario = {
      ...sized,
      router,
      seed: sized.seed + k,
      phases: [{ durationS: trafficS, load: 0 }],
    };
    const workload = tenantWorkload(scenario, capacityRps, chosen);
    // FIFO: the same requests without their tenant, so the router keeps one shared FIFO queue.
    const submitted = variant === "fifo" ? workload.map(({ tenant: _, ...request }) => request) : workload;
    const { requests } = runSimulation(scenario, policy, submitted);
    runs.push({ workload, requests });
    burstCompletions += requests.filter(
      (t) => t.result === "served" && isWithin(t.completedAtMs as number, burst.fromS * 1000, burst.toS * 1000),
    ).length;
    if (caseSpec.alone) {
      const tenantOf = new Map(workload.map((request) => [request.id, request.tenant?.tenant]));
      quietBound.push(...placedAtFirstUnclaimedRelease(requests, (t) => tenantOf.get(t.id) === caseSpec.alone));
    }
    const perTenant = tenantFigures([{ workload, requests }]);
    const shares = maxMinFairShares(
      perTenant.reduce((sum, t) => sum + t.served, 0),
      perTenant.map((t) => t.requests),
      perTenant.map((t) => chosen.find((s) => s.tenant === t.tenant)?.weight ?? 1),
    );
    jains.push(jainIndex(perTenant.map((t, i) => t.served / Math.min(t.requests, shares[i] as number))));
  }
  const tenants = tenantFigures(runs);
  const batch = tenants.filter((t) => t.priority === "batch");
  const refused = tenants.reduce((s, t) => s + t.refusedAttempts, 0);
  const batchRefused = batch.reduce((s, t) => s + t.refusedAttempts, 0);
  // Completions by class from the run's first completion (the fleet's first service time is empty for everyone) to
  // the end of the traffic, against the capacity of that window.
  const inWindow = { interactive: 0, batch: 0 };
  let windowCapacity = 0;
  for (const run of runs) {
    const byId = new Map(run.workload.map((request) => [request.id, request]));
    const served = run.requests.filter((t) => t.result === "served" && (t.completedAtMs as number) <= trafficS * 1000);
    const firstMs = Math.min(...served.map((t) => t.completedAtMs as number));
    windowCapacity += (capacityRps * (trafficS * 1000 - firstMs)) / 1000;
    for (const trace of served) inWindow[byId.get(trace.id)?.tenant?.priority ?? "interactive"] += 1;
  }
  const leftover = windowCapacity - inWindow.interactive;
  return {
    tenants,
    jain: jains.reduce((s, j) => s + j, 0) / jains.length,
    batchRefusalShare: batch.length === 0 || refused === 0 ? null : batchRefused / refused,
    batchOfLeftover: batch.length === 0 ? null : inWindow.batch / leftover,
    quietPlacedAtFirstReleaseP99S: caseSpec.alone ? percentile(quietBound, 99) : null,
    burstThroughputShare: caseSpec.alone
      ? burstCompletions / seedCount / ((burst.toS - burst.fromS) * capacityRps)
      : null,
  };
}

function isWithin(atMs: number, fromMs: number, toMs: number): boolean {
  return atMs >= fromMs && atMs < toMs;
}

const started = performance.now();
type SizedCase = ReturnType<typeof caseBase>;
const sizedCases = spec.cases.map(caseBase);
const results = spec.cases.map((caseSpec, i) => {
  const streams = caseSpec.streams ?? zipfStreams(caseSpec.zipf as NonNullable<CaseSpec["zipf"]>);
  const sized = sizedCases[i] as SizedCase;
  const variants: Partial<Record<Variant, VariantResult>> = {
    fair: runVariant(caseSpec, sized, streams, "fair"),
    fifo: runVariant(caseSpec, sized, streams, "fifo"),
    ...(caseSpec.alone ? { alone: runVariant(caseSpec, sized, streams, "alone") } : {}),
  };
  console.log(`${caseSpec.name}: done at ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return {
    name: caseSpec.name,
    title: caseSpec.title,
    alone: caseSpec.alone ?? null,
    capacityRps: sized.capacityRps,
    variants,
  };
});

/** One case's fair-queue figures under one `tenantHeadroomSlots` value (the sweep). */
interface HeadroomFigures {
  name: string;
  /** The quiet tenant's p99 time to success beside the burst / alone (the alone run does not depend on it). */
  quietP99Ratio: number | null;
  quietServedShare: number | null;
  quietFirstAttemptAdmission: number | null;
  /** The work-conserving bound of the quiet tenant's p99 with this run's completion times (see VariantResult). */
  quietPlacedAtFirstReleaseP99S: number | null;
  /** The bursting (non-quiet) tenants' served share. */
  heavyServedShare: number | null;
  burstThroughputShare: number | null;
  jain: number;
  /** Every tenant's requests served, as a share of all. */
  servedShare: number;
  interactiveServedShare: number;
  batchRefusalShare: number | null;
  batchOfLeftover: number | null;
}

/** `tenantHeadroomSlots` values the sweep runs (the fair queue on every case; the same seeds as above). */
const HEADROOM_SWEEP = [0, 1, 2, 3];
const servedOf = (ts: readonly TenantFigures[]) =>
  ts.reduce((n, t) => n + t.served, 0) / ts.reduce((n, t) => n + t.requests, 0);
const sweep = HEADROOM_SWEEP.map((slots) => ({
  slots,
  cases: spec.cases.map((caseSpec, i): HeadroomFigures => {
    const streams = caseSpec.streams ?? zipfStreams(caseSpec.zipf as NonNullable<CaseSpec["zipf"]>);
    const v = runVariant(caseSpec, sizedCases[i] as SizedCase, streams, "fair", slots);
    const alone = (results[i]?.variants.alone?.tenants ?? []).find((t) => t.tenant === caseSpec.alone);
    const quiet = v.tenants.find((t) => t.tenant === caseSpec.alone);
    const heavy = v.tenants.filter((t) => caseSpec.alone !== undefined && t.tenant !== caseSpec.alone);
    return {
      name: caseSpec.name,
      quietP99Ratio:
        quiet?.timeToSuccessP99S && alone?.timeToSuccessP99S ? quiet.timeToSuccessP99S / alone.timeToSuccessP99S : null,
      quietServedShare: quiet?.servedShare ?? null,
      quietFirstAttemptAdmission: quiet?.firstAttemptAdmission ?? null,
      quietPlacedAtFirstReleaseP99S: v.quietPlacedAtFirstReleaseP99S,
      heavyServedShare: heavy.length > 0 ? servedOf(heavy) : null,
      burstThroughputShare: v.burstThroughputShare,
      jain: v.jain,
      servedShare: servedOf(v.tenants),
      interactiveServedShare: servedOf(v.tenants.filter((t) => t.priority === "interactive")),
      batchRefusalShare: v.batchRefusalShare,
      batchOfLeftover: v.batchOfLeftover,
    };
  }),
}));
console.log(`headroom sweep: done at ${((performance.now() - started) / 1000).toFixed(1)} s`);

const report = {
  command: "npm run eval:tenants",
  seeds: seedCount,
  capacityRps,
  policy: policy.id,
  tenantHeadroomSlots: DEFAULT_TENANT_HEADROOM_SLOTS,
  cases: results,
  headroomSweep: sweep,
};
writeGenerated(join(root, "docs/tenants.json"), `${JSON.stringify(report, null, 2)}\n`);

const pct = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);
const sec = (x: number | null) => (x === null ? "-" : x.toFixed(2));
const lines: string[] = [
  "# Tenants: evaluation",
  "",
  "Generated by `npm run eval:tenants` (eval/run-tenants.ts, cases in eval/tenants/scenarios.json); do not edit.",
  `Virtual-time simulator, ${seedCount} seeds per variant (the same seeds and the same requests for every variant),`,
  `policy \`${policy.id}\`, fleet capacity ${capacityRps.toFixed(2)} requests/s (measured). **fair**: requests carry`,
  "their tenant, weight and class (the fair queue, with the router's default `tenantHeadroomSlots`,",
  `${DEFAULT_TENANT_HEADROOM_SLOTS}); **fifo**: the same requests untagged (one FIFO queue, the baseline); **alone**: the named`,
  "tenant's requests only. Time to success runs from a request's first attempt",
  "to the end of its response, retries included; admission wait is the admitted attempt's time in the router's",
  "queue. Jain's index is over served / min(demand, fair share), fair shares being the max-min fair split of what",
  "the fleet served in the run (the mean of the seeds).",
  "",
];
for (const r of results) {
  lines.push(`## ${r.title}`, "");
  if (r.capacityRps !== capacityRps)
    lines.push(`Fleet capacity for this case's request sizes: ${r.capacityRps.toFixed(2)} requests/s (measured).`, "");
  lines.push(
    "| variant | tenant | class | requests | served | first-attempt admission | refused attempts | time to success p50 s | p99 s | admission wait p99 s |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const [variant, v] of Object.entries(r.variants)) {
    for (const t of v.tenants) {
      lines.push(
        `| ${variant} | ${t.tenant} | ${t.priority} | ${t.requests} | ${pct(t.servedShare)} | ${pct(t.firstAttemptAdmission)} | ${t.refusedAttempts} | ${sec(t.timeToSuccessP50S)} | ${sec(t.timeToSuccessP99S)} | ${sec(t.admissionWaitP99S)} |`,
      );
    }
  }
  lines.push("");
  const fair = r.variants.fair as VariantResult;
  const fifo = r.variants.fifo as VariantResult;
  lines.push(`Jain's index: fair ${fair.jain.toFixed(3)}, fifo ${fifo.jain.toFixed(3)}.`);
  if (fair.batchRefusalShare !== null) {
    lines.push(
      `Batch's share of refused attempts: fair ${pct(fair.batchRefusalShare)}, fifo ${pct(fifo.batchRefusalShare)}.`,
      `From the first completion to the end of the traffic, batch completions / the capacity interactive completions left: fair ${pct(fair.batchOfLeftover)}, fifo ${pct(fifo.batchOfLeftover)}.`,
    );
  }
  if (r.alone) {
    const quiet = (v: VariantResult | undefined) => v?.tenants.find((t) => t.tenant === r.alone);
    const withA = quiet(fair);
    const alone = quiet(r.variants.alone);
    if (withA?.timeToSuccessP99S && alone?.timeToSuccessP99S) {
      lines.push(
        `${r.alone}'s p99 time to success beside the burst / alone: fair ${(withA.timeToSuccessP99S / alone.timeToSuccessP99S).toFixed(2)}x, fifo ${((quiet(fifo)?.timeToSuccessP99S ?? Number.NaN) / alone.timeToSuccessP99S).toFixed(2)}x.`,
      );
    }
  }
  lines.push("");
}
// The issue's targets, computed from the figures above (fair queue).
const met = (ok: boolean) => (ok ? "met" : "**not met**");
const caseNamed = (name: string) => results.find((r) => r.name === name);
const noisy = caseNamed("noisy-neighbour");
const quietFair = noisy?.variants.fair?.tenants.find((t) => t.tenant === noisy.alone);
const quietAlone = noisy?.variants.alone?.tenants.find((t) => t.tenant === noisy.alone);
const zipf = caseNamed("zipf-8")?.variants.fair;
const mix = caseNamed("priority-mix")?.variants.fair;
const mixInteractive = mix?.tenants.filter((t) => t.priority === "interactive") ?? [];
/** A case's figures in the headroom sweep's run with `slots`. */
function sweepCase(slots: number, name: string): HeadroomFigures | undefined {
  return sweep.find((row) => row.slots === slots)?.cases.find((c) => c.name === name);
}
function fmtRatio(x: number | null | undefined): string {
  return x === null || x === undefined ? "-" : `${x.toFixed(2)}x`;
}

/** The sweep's tables, and the headroom's gain beside its cost at the default. */
function headroomSection(): string[] {
  const fleetSlots = base.fleet.replicas.reduce((n, group) => n + group.count, 0) * base.fleet.maxOngoingRequests;
  const noisyCases = spec.cases.filter((c) => c.alone !== undefined);
  const burst = burstWindowS(noisyCases[0]?.streams ?? []);
  const out = [
    "## Tenant headroom (`tenantHeadroomSlots`)",
    "",
    `The fair queue on every case with 0 to ${HEADROOM_SWEEP.at(-1)} slots of headroom (the same seeds and requests); the fleet has`,
    `${fleetSlots} slots, and the router's default is ${DEFAULT_TENANT_HEADROOM_SLOTS} (its rows are the tables above). Completions during the burst:`,
    `every tenant's responses completed from ${burst.fromS} s to ${burst.toS} s, per second, over the fleet's capacity.`,
    "",
    "| headroom slots | case | quiet tenant's p99 / alone | its served | its first-attempt admission | bursting tenant served | completions during the burst / capacity |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of sweep) {
    for (const c of noisyCases) {
      const f = row.cases.find((x) => x.name === c.name) as HeadroomFigures;
      out.push(
        `| ${row.slots} | ${c.name} | ${fmtRatio(f.quietP99Ratio)} | ${pct(f.quietServedShare)} | ${pct(f.quietFirstAttemptAdmission)} | ${pct(f.heavyServedShare)} | ${pct(f.burstThroughputShare)} |`,
      );
    }
  }
  out.push(
    "",
    "| headroom slots | zipf-8: Jain's index | zipf-8: served, all tenants | priority-mix: interactive served | batch's share of refusals | batch completions / capacity interactive left |",
    "| --- | --- | --- | --- | --- | --- |",
  );
  for (const row of sweep) {
    const z = sweepCase(row.slots, "zipf-8");
    const m = sweepCase(row.slots, "priority-mix");
    out.push(
      `| ${row.slots} | ${z?.jain.toFixed(3) ?? "-"} | ${pct(z?.servedShare ?? null)} | ${pct(m?.interactiveServedShare ?? null)} | ${pct(m?.batchRefusalShare ?? null)} | ${pct(m?.batchOfLeftover ?? null)} |`,
    );
  }
  const off = sweepCase(0, "noisy-neighbour");
  const on = sweepCase(DEFAULT_TENANT_HEADROOM_SLOTS, "noisy-neighbour");
  const zOff = sweepCase(0, "zipf-8");
  const zOn = sweepCase(DEFAULT_TENANT_HEADROOM_SLOTS, "zipf-8");
  const mOn = sweepCase(DEFAULT_TENANT_HEADROOM_SLOTS, "priority-mix");
  const smallest = sweep.find(
    (row) => (row.cases.find((c) => c.name === "noisy-neighbour")?.quietP99Ratio ?? 9) <= 1.5,
  );
  if (off && on && zOff && zOn && mOn) {
    out.push(
      "",
      `Gain and cost at the default (${DEFAULT_TENANT_HEADROOM_SLOTS} slot${DEFAULT_TENANT_HEADROOM_SLOTS === 1 ? "" : "s"}, ${pct(DEFAULT_TENANT_HEADROOM_SLOTS / fleetSlots)} of the fleet's slots), against none: the quiet tenant's p99`,
      `beside the burst falls from ${fmtRatio(off.quietP99Ratio)} to ${fmtRatio(on.quietP99Ratio)} its time alone. The headroom is not work-conserving, so`,
      "a burst of several tenants pays for it: while the light tenant does not use the slot held for it, the fleet runs",
      `that much below full. The bursting tenant's served share falls from ${pct(off.heavyServedShare)} to ${pct(on.heavyServedShare)}, the fleet's`,
      `completions during the burst from ${pct(off.burstThroughputShare)} to ${pct(on.burstThroughputShare)} of capacity (at most about the headroom's share of`,
      `the slots, less when the light tenant uses it), and the Zipf case's served share from ${pct(zOff.servedShare)} to ${pct(zOn.servedShare)}`,
      `(its Jain's index ${zOff.jain.toFixed(3)} -> ${zOn.jain.toFixed(3)}). Batch still takes ${pct(mOn.batchOfLeftover)} of the capacity interactive work leaves.`,
      smallest
        ? `The smallest headroom that meets the 1.5x target in this run is ${smallest.slots}${smallest.slots === DEFAULT_TENANT_HEADROOM_SLOTS ? ", the default" : ` (the default is ${DEFAULT_TENANT_HEADROOM_SLOTS})`}; more buys margin at`
        : "No headroom in the sweep meets the 1.5x target; more buys a lower p99 at",
      "a proportional cost. A deployment that wants every slot busy whatever its tenants sets it to 0.",
    );
  }
  out.push("");
  return out;
}

lines.push("## Targets (issue 16), fair queue", "");
if (quietFair && quietAlone) {
  const ratio = (quietFair.timeToSuccessP99S ?? Number.NaN) / (quietAlone.timeToSuccessP99S ?? Number.NaN);
  lines.push(
    `- Noisy neighbour, ${noisy?.alone} served >= 99%: ${pct(quietFair.servedShare)}, ${met(quietFair.servedShare >= 0.99)}.`,
    `- Noisy neighbour, ${noisy?.alone} first-attempt admission >= 95%: ${pct(quietFair.firstAttemptAdmission)}, ${met(quietFair.firstAttemptAdmission >= 0.95)}.`,
    `- Noisy neighbour, ${noisy?.alone} p99 time to success <= 1.5x alone: ${ratio.toFixed(2)}x, ${met(ratio <= 1.5)}, with the router's`,
    `  default \`tenantHeadroomSlots\` (${DEFAULT_TENANT_HEADROOM_SLOTS}); without headroom (0) it is ${fmtRatio(sweepCase(0, "noisy-neighbour")?.quietP99Ratio)} (the sweep below).`,
    "  Without headroom its extra time is the wait for a free slot in a fleet the burst keeps saturated (alone it",
    "  finds free slots). Every request here has the same size, so the requests a replica admits together finish",
    "  together and, in saturation, slots free in clumps with gaps of a second or more between them. The router places",
    "  on a release at once (a slot its own release frees is taken without a probe or a backoff, also when the release",
    "  lands while that replica's probe is out; see docs/architecture.md), and the fair queue serves the tenant with",
    "  the least recent service first (decayed attained service, src/core/fair-queue.ts), so the quiet tenant does not",
    "  alternate with the burst when several of its requests wait through such a gap.",
  );
  const workConserving = sweepCase(0, "noisy-neighbour");
  const bound = workConserving?.quietPlacedAtFirstReleaseP99S ?? null;
  const aloneP99 = quietAlone.timeToSuccessP99S ?? Number.NaN;
  const measured = (workConserving?.quietP99Ratio ?? Number.NaN) * aloneP99;
  if (bound !== null) {
    const same = Math.abs(measured - bound) < 0.005;
    lines.push(
      `  Without headroom, had every ${noisy?.alone} request gone ahead of the burst, each placed at the first slot release after`,
      `  it reached the router that an earlier ${noisy?.alone} request did not take (src/sim/first-release-bound.ts; a release frees`,
      `  one slot), its p99 would be ${bound.toFixed(2)} s, ${(bound / aloneP99).toFixed(2)}x alone${
        same ? ", the same as measured: no work-conserving queue order" : `, against ${measured.toFixed(2)} s measured.`
      }`,
      ...(same ? ["  or placement does better with those completion times."] : []),
    );
  }
  lines.push(
    "  The lever left is not work-conserving: the tenant headroom (src/core/tenant-headroom.ts). While some tenant",
    `  other than the one being placed is active (a request of it arrived or ended within the last ${TENANT_ACTIVE_WINDOW_MS / 1000} s, or one`,
    "  waits or is in flight) and holds fewer than its weighted fair share of the fleet's slots, a request of a tenant",
    "  at or above its own share is not placed if that would leave fewer than `tenantHeadroomSlots` slots free: it",
    `  waits in the queue (it is not refused for this), so ${noisy?.alone}'s next request usually finds a free slot at once. A`,
    "  single tenant, untagged traffic, or tenants all below their shares are placed as before; batch never holds room",
    "  back from interactive work. What it costs is in the headroom section below.",
  );
}
const varied = caseNamed("noisy-neighbour-varied");
const variedFair = varied?.variants.fair?.tenants.find((t) => t.tenant === varied.alone);
const variedAlone = varied?.variants.alone?.tenants.find((t) => t.tenant === varied.alone);
if (variedFair && variedAlone) {
  const ratio = (variedFair.timeToSuccessP99S ?? Number.NaN) / (variedAlone.timeToSuccessP99S ?? Number.NaN);
  lines.push(
    `- The same noisy neighbour with answers of varied length (\`${varied?.name}\` above): ${varied?.alone} served`,
    `  ${pct(variedFair.servedShare)}, first-attempt admission ${pct(variedFair.firstAttemptAdmission)}, p99 time to success ${ratio.toFixed(2)}x alone (<= 1.5x: ${met(ratio <= 1.5)}).`,
    "  Completions no longer clump, so a slot frees soon after a request arrives, and the headroom gains less here.",
  );
}
if (zipf) lines.push(`- Zipf tenants, Jain's index >= 0.95: ${zipf.jain.toFixed(3)}, ${met(zipf.jain >= 0.95)}.`);
if (mix) {
  const served = mixInteractive.reduce((s, t) => s + t.served, 0) / mixInteractive.reduce((s, t) => s + t.requests, 0);
  lines.push(
    `- Priority mix, interactive served >= 99%: ${pct(served)}, ${met(served >= 0.99)}.`,
    `- Priority mix, batch takes >= 95% of the refusals: ${pct(mix.batchRefusalShare)}, ${met((mix.batchRefusalShare ?? 0) >= 0.95)}.`,
    `- Priority mix, batch served whenever interactive leaves capacity: it completed ${pct(mix.batchOfLeftover)} of the capacity interactive left`,
    `  (FIFO ${pct(caseNamed("priority-mix")?.variants.fifo?.batchOfLeftover ?? null)}, where nothing is ordered by class).`,
  );
}
lines.push("", ...headroomSection());
writeGenerated(join(root, "docs/tenants.md"), `${lines.join("\n")}`);
console.log(`wrote docs/tenants.json and docs/tenants.md in ${((performance.now() - started) / 1000).toFixed(1)} s`);
