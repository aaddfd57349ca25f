import { DEFAULT_CAPACITY_BOOKING_OPTIONS, promisesEnded } from "../core/capacity-booking";
import { DEFAULT_YIELD_SERVICE_S, type YieldOrder } from "../core/fair-queue";
import { type BookingAdmission, DEFAULT_BOOKING_ADMISSION } from "../core/router-options";
import { DRAINING_WINDOW_S } from "../core/standing-queue";
import type { PolicyResult, ScenarioResult } from "./evaluation";
import { headerClientShares, headerlessBehindPts, headerlessWithin } from "./header-clients";
import type { HeldOutScenario } from "./held-out";
import type { HeldSeedsRun } from "./held-seeds";
import { COMPLETION_HORIZONS_S, type LedgerMetrics } from "./metrics";
import { pct } from "./report-format";
import { heldSeedsFills } from "./report-held-seeds";
import {
  type E2eOpenAiRun,
  headlineTable,
  issueTable,
  type SweepPoint,
  sweepTable,
  sweepTargetsLine,
} from "./report-markdown";
import {
  E2E_TWINS,
  type E2eTwinId,
  meetsTwinTargets,
  targetTwins,
  twinTargets,
  twinTargetsTable,
} from "./report-twin-targets";
import type { TargetCheck } from "./targets";
import type { TwinFit } from "./twin-fit";
import { COMBINED_CANDIDATES, type VariantSummary, variantsAhead } from "./variants";

/**
 * The default beside its variants (src/sim/variants.ts) on issue 15's targets: scenarios met per target, the
 * worst curve gaps summed, the mean waits summed (what the curve does not count), and the sustained overload's p50
 * time to success.
 *
 * @example
 * ```ts
 * variantsTable(json.variants); // "| variant | what changes | ... |"
 * ```
 */
export function variantsTable(variants: readonly VariantSummary[], heldOut: readonly VariantSummary[] = []): string {
  const held = new Map(heldOut.map((v) => [v.id, v]));
  const lines = [
    `| variant | what changes | curve within 2 pts | served within 1 pt | within 5 pts of oracle | attempts <= static 30 s | worst curve gaps, summed | mean wait, summed | sustained-1.3x served / p50 |${held.size > 0 ? " held-out seeds: worst curve gaps, summed (scenarios meeting curve, served, oracle, attempts); mean wait, summed |" : ""}`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- |${held.size > 0 ? " --- |" : ""}`,
  ];
  for (const v of variants) {
    const heldV = held.get(v.id);
    const heldCell =
      held.size === 0
        ? ""
        : ` ${heldV ? `${heldV.worstCurveGapSumPts.toFixed(1)} pts (${heldV.met.curve}, ${heldV.met.served}, ${heldV.met.oracle}, ${heldV.met.attempts}); ${meanWaitSum(heldV)}` : "n/a"} |`;
    const n = v.scenarios;
    const sustained = v.perScenario["sustained-1.3x"];
    const p50 = sustained?.timeToSuccessP50S;
    const sustainedCell = sustained
      ? `${pct(sustained.servedFraction)} / ${p50 === null || p50 === undefined ? "n/a" : `${p50.toFixed(1)} s`}`
      : "n/a";
    lines.push(
      `| ${v.id} | ${v.change} | ${v.met.curve} of ${n} | ${v.met.served} of ${n} | ${v.met.oracle} of ${n} | ${v.met.attempts} of ${n} | ${v.worstCurveGapSumPts.toFixed(1)} pts | ${meanWaitSum(v)} | ${sustainedCell} |${heldCell}`,
    );
  }
  return lines.join("\n");
}

/** A summary's summed mean wait, seconds ("n/a" for a run made before it was recorded). */
function meanWaitSum(v: VariantSummary): string {
  return Number.isFinite(v.meanWaitSumS) ? `${v.meanWaitSumS.toFixed(1)} s` : "n/a";
}

/**
 * Which variants beat the default on the summed worst curve gaps, on the tuning seeds, on the held-out seeds, or
 * on both: a variant that wins on one set only did not win on its design.
 *
 * @example
 * ```ts
 * heldOutVariantsNote(json.variants, json.heldOut.variants); // "On the held-out seeds the default's ..."
 * ```
 */
export function heldOutVariantsNote(variants: readonly VariantSummary[], heldOut: readonly VariantSummary[]): string {
  const [tunedDefault, heldDefault] = [variants[0], heldOut[0]];
  if (!tunedDefault || !heldDefault) return "(the held-out seeds were not run: `npm run eval -- --no-held-out`)";
  const { both, tunedOnly, heldOnly, largestLeadPts } = variantsAhead(variants, heldOut);
  const list = (ids: string[]) => (ids.length === 0 ? "none" : ids.map((id) => `\`${id}\``).join(", "));
  const moves = Math.abs(heldDefault.worstCurveGapSumPts - tunedDefault.worstCurveGapSumPts);
  return [
    `On the held-out seeds (the last column) the default's worst curve gaps sum to ${heldDefault.worstCurveGapSumPts.toFixed(1)} points, against ${tunedDefault.worstCurveGapSumPts.toFixed(1)} on the tuning seeds.`,
    `Variants whose summed gaps are smaller than the default's on both seed sets: ${list(both)}${both.length > 0 ? ` (ahead by at most ${largestLeadPts.toFixed(1)} points on either set, where the default's own sum moves by ${moves.toFixed(1)} between the sets)` : ""}; on the tuning seeds only: ${list(tunedOnly)}; on the held-out seeds only: ${list(heldOnly)}.`,
    "A variant ahead on one set only is ahead on those seeds' arrivals, not on its design.",
  ].join(" ");
}

/**
 * The variants ahead of the default on both seed sets, and the default, against issue 15's end-to-end targets in
 * the simulator's twin of the end-to-end run: what the summed curve gaps do not show.
 *
 * @example
 * ```ts
 * aheadVariantsInTwin(json.variants, json.heldOut.variants, twin, "booked_capacity"); // "| policy | ... |\n\n..."
 * ```
 */
export function aheadVariantsInTwin(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  twin: E2eTwinRun | undefined,
  defaultPolicy: string,
): string {
  if (!twin) return "(not run: npm run eval:e2e-twin)";
  const { both } = variantsAhead(variants, heldOut);
  const inTwin = both.filter((id) =>
    targetTwins(twin).every((t) => t.policies.some((p) => p.id === `${defaultPolicy}:${id}`)),
  );
  const missing = both.filter((id) => !inTwin.includes(id));
  const meeting = [defaultPolicy, ...inTwin.map((id) => `${defaultPolicy}:${id}`)].filter((id) =>
    meetsTwinTargets(twin, id, defaultPolicy),
  );
  return [
    twinTargetsTable(twin, inTwin, defaultPolicy),
    "",
    `Every end-to-end target in both twins: ${meeting.length === 0 ? "none of them" : meeting.map((id) => `\`${id}\``).join(", ")}.${missing.length > 0 ? ` Not in the twin: ${missing.map((id) => `\`${id}\``).join(", ")}.` : ""}`,
  ].join("\n");
}

/** The default policy's hint measures beside `retry_schedule`'s: X, hint coverage, all retries admitted. */
export function hintTable(results: readonly ScenarioResult[], defaultPolicy: string): string {
  const lines = [
    `| scenario | ${defaultPolicy}: X / hint coverage / all retries admitted | retry_schedule: X / hint coverage / all retries admitted | static-30: X / all retries admitted |`,
    "| --- | --- | --- | --- |",
  ];
  for (const r of results) {
    const cell = (id: string, coverage = true) => {
      const m = r.policies.find((p) => p.id === id)?.metrics;
      if (!m) return "n/a";
      return coverage
        ? `${pct(m.admittedRetryRate)} / ${pct(m.hintCoverage)} / ${pct(m.anyRetryAdmittedRate)}`
        : `${pct(m.admittedRetryRate)} / ${pct(m.anyRetryAdmittedRate)}`;
    };
    lines.push(`| ${r.name} | ${cell(defaultPolicy)} | ${cell("retry_schedule")} | ${cell("static-30", false)} |`);
  }
  return lines.join("\n");
}

/** How demoted requests are ordered among themselves, in words (for `defaultsList`). */
function demotedOrderProse(order: YieldOrder, serviceS: number): string {
  switch (order) {
    case "newest_first":
      return "the one first refused most recently goes first, and the one first refused longest ago is pushed out at the queue's bound";
    case "arrival":
      return "in arrival order, the newest pushed out at the queue's bound";
    case "next_horizon":
      return `earliest deadline first on the next completion horizon (5, 15, 30, 60, 120 s after its first refusal) each can still make, starting by that horizon less \`booking.demotedServiceS\` = ${serviceS} s; the one first refused longest ago is pushed out at the queue's bound`;
  }
}

/** The policy's defaults, from the code. */
export function defaultsList(): string {
  const a = DEFAULT_BOOKING_ADMISSION;
  const o = DEFAULT_CAPACITY_BOOKING_OPTIONS;
  return [
    `- queue-delay target \`booking.queueDelayTargetS\`: ${a.queueDelayTargetS ?? "none"} s, applied once the queue has stood above it for \`booking.standingIntervalS\` = ${a.standingIntervalS} s, until nothing has been refused for as long${a.drainingOfferedShare === undefined ? "" : `, and never while the attempts offered over the last ${DRAINING_WINDOW_S} s are below \`booking.drainingOfferedShare\` = ${a.drainingOfferedShare} of the drain rate (a queue that drains by itself)`};`,
    `- demotion \`booking.demoteAfterS\`: ${a.demoteAfterS ?? "off"}${a.demoteAfterS === undefined ? "" : " s"} - a request whose client was first refused longer ago (its refusals remembered by fingerprint until it is ${a.forgetRefusalsWhenQueued ? "queued" : "placed on a replica"}: \`booking.forgetRefusalsWhenQueued\` = ${a.forgetRefusalsWhenQueued ?? false}) waits behind every other and holds no room${a.demotedTimeoutS === undefined ? "" : `, and may wait in the queue up to \`booking.demotedTimeoutS\` = ${a.demotedTimeoutS} s where the queue's timeout is shorter`}${a.demotedQuietTimeoutS === undefined ? "" : `, up to \`booking.demotedQuietTimeoutS\` = ${a.demotedQuietTimeoutS} s while no one has been turned away for a full queue (an arrival refused, or a queued request pushed out by one) in the last ${DRAINING_WINDOW_S} s`}; among themselves (\`booking.demotedOrder\` = \`${a.demotedOrder ?? "newest_first"}\`) ${demotedOrderProse(a.demotedOrder ?? "newest_first", a.demotedServiceS ?? DEFAULT_YIELD_SERVICE_S)}; the requests not demoted among themselves (\`booking.freshOrder\` = \`${a.freshOrder ?? "arrival"}\`) ${(a.freshOrder ?? "arrival") === "arrival" ? "in arrival order" : "earliest deadline first on the next completion horizon from each one's arrival"}, except that ${freshNewestProse(a)};`,
    `- room held for promises: at most \`booking.maxHeldRoomShare\` = ${a.maxHeldRoomShare} of the queue's limit; a promise holds its place from ${o.leadS} s before its due instant to ${o.heldLateS} s after it, and may be claimed from ${o.earlyS} s early to ${o.lateS} s late;`,
    `- retry capacity per second: drain rate minus the fresh arrivals forecast for that second - the baseline (the lowest ${o.baselineWindowS} s-smoothed rate, alpha ${o.freshAlpha}, of the last ${o.baselineWindowS} s${o.overloadFloorS > 0 ? `; for an overload, at least the ${o.overloadFloorQuantile > 0 ? `${o.overloadFloorQuantile}-quantile of the rates` : "lowest rate"} smoothed with alpha ${o.burstAlpha}${o.overloadFloorMovingS > 0 ? ` or of the counts' ${o.overloadFloorMovingS} s moving means, whichever is higher and below the drain rate,` : ""} from ${o.overloadFloorS} s before its first refusal on, read over the ${o.overloadFloorS} s before the queue began to fill when that is at or above the drain rate (the overload floor)` : ""}) plus the current rate's excess over it (smoothed with alpha ${o.burstAlpha}), fading with a time constant of ${o.burstFadeS} s${o.burstPersistence > 0 ? ` or ${o.burstPersistence === 1 ? "" : `${o.burstPersistence} x `}the burst's age, whichever is longer (its age: since the first refusal after ${o.burstQuietS} s without one)` : ""} - within [${o.minRetryShare}, ${o.maxRetryShare}] of the drain rate, times the trust (kept promises +${o.trustGain}, broken x${o.trustLoss}, at least ${o.minTrust}) and overbooked by 1 / show rate (at most x${o.maxOverbooking}; prior show rate ${o.priorShowRate});`,
    `- first bookable second: once the queue ahead has drained through what fresh arrivals leave (queue depth / (drain rate - baseline), the rate at least ${o.minBacklogDrainShare} of the drain rate${o.queueRefill ? "; with queue refill, the queue stays at its depth while the forecast fresh arrivals exceed the drain rate and drains through what they leave after that" : ""}), and at least 1 s away;`,
    `- best effort (no second within the horizon has room): uniform over [end / 2, end], where end is the overload's age (since the first refusal after ${o.burstQuietS} s without one)${o.bestEffortAgeFactor === 1 ? "" : ` x ${o.bestEffortAgeFactor}`}, at least \`bestEffortMinEndS\` = ${o.bestEffortMinEndS} s${o.bestEffortRecurMinEndS === undefined ? "" : ` (\`bestEffortRecurMinEndS\` = ${o.bestEffortRecurMinEndS} s in an overload that began at most \`probeRecurS\` = ${o.probeRecurS} s after the one before it ended)`} and at most the client's horizon;`,
    o.probeS > 0
      ? `- probe (instead of the best effort, on a request's first refusal in an overload younger than \`probeYoungS\` = ${o.probeYoungS} s that began at most \`probeRecurS\` = ${o.probeRecurS} s after the one before it ended): uniform over [${o.probeS / 2}, ${o.probeS}] s (\`probeS\` = ${o.probeS});`
      : "- no probe (`probeS` = 0);",
    `- ledger: ${o.ledgerS} s of one-second buckets; at most ${o.maxBookings} promises kept.`,
  ].join("\n");
}

/**
 * docs/retry-policy.md from its template (eval/retry-policy.md): the prose is committed, every figure is filled
 * in from the evaluation's results. Placeholders: `{{headline}}`, `{{issue}}`, `{{hints}}`, `{{sweep}}`,
 * `{{defaults}}`, `{{variants}}`, `{{heldOutVariants}}`, `{{headerlessSustainedGap}}` (and held out:
 * `{{heldOutHeaderlessSustainedGap}}`), and the queue refill
 * bullets' `{{noQueueRefillRow}}`, `{{noOverloadFloorRow}}`, `{{beforeQueueRefillRow}}`, `{{twinQueueRefillAlone}}`,
 * `{{medianOverloadFloorRow}}`, `{{twinMedianOverloadFloor}}`, `{{e2eQueueRefillAb}}` and `{{e2eMedianFloorAb}}` (from
 * docs/e2e-twin.json and the default-only end-to-end runs), and the `{{heldSeeds...}}` figures of ten held-out
 * seeds (docs/held-out-seeds.json, src/sim/report-held-seeds.ts); an unknown one is an error (template and code must
 * agree).
 *
 * @example
 * ```ts
 * writeFileSync("docs/retry-policy.md", renderPolicyDoc({ template, results, checks, sweeps, defaultPolicy }));
 * ```
 */
export function renderPolicyDoc(input: {
  template: string;
  results: readonly ScenarioResult[];
  checks: readonly TargetCheck[];
  sweeps: readonly SweepPoint[];
  variants: readonly VariantSummary[];
  /** The same variants scored on the held-out seeds (src/sim/held-out.ts), when the run made them. */
  heldOutVariants?: readonly VariantSummary[];
  /** The default on the held-out seeds, scenario by scenario (src/sim/held-out.ts), when the run made them. */
  heldOutScenarios?: readonly HeldOutScenario[];
  defaultPolicy: string;
  /** docs/e2e-twin.json (`npm run eval:e2e-twin`), when written. */
  twin?: E2eTwinRun | undefined;
  /** The default end to end without and with queue refill and the overload floor (default policy only). */
  queueRefillAb?: { before: E2eOpenAiRun | undefined; after: E2eOpenAiRun | undefined };
  /** The default end to end with the lowest (`before`) and the median (`after`) overload floor, 5 s fade both. */
  medianFloorAb?: { before: E2eOpenAiRun | undefined; after: E2eOpenAiRun | undefined };
  /** Full end-to-end runs on the same seeds: the default until today (`before`) and today's (`after`). */
  fastFadeAb?: { before: E2eOpenAiRun | undefined; after: E2eOpenAiRun | undefined };
  /** docs/held-out-seeds.json (`npm run eval:held-seeds`), when written and current. */
  heldSeeds?: HeldSeedsRun | undefined;
}): string {
  const demo = input.results.find((r) => r.name === "demo-burst-3x");
  const heldOut = input.heldOutVariants ?? [];
  const targetsRow = (id: string) => variantTargetsAgainstDefault(input.variants, heldOut, id);
  // A variant's sustained-overload p50 and its mean waits beside the default's, on both seed sets.
  const p50Row = (id: string) => sustainedP50AgainstDefault(input.variants, heldOut, id);
  const waitsRow = (id: string) => meanWaitAgainstDefault(input.variants, heldOut, id);
  // Attempts per offered request where a variant moves them by 0.01 or more, the default first.
  const attemptsChanges = (id: string) =>
    shareChanges(
      input.variants,
      id,
      (f) => f.attemptsPerOffered,
      1,
      (f) => f.attemptsPerOffered.toFixed(3),
    );
  // A variant of the default in the twin, beside the default (after a quiet spell, at 30 s, unless told).
  const inTwin = (variant: string, horizonsS?: readonly number[], twinId?: E2eTwinId) =>
    twinAgainstDefault(input.twin, `${input.defaultPolicy}:${variant}`, input.defaultPolicy, horizonsS, twinId);
  const fills: Record<string, string> = {
    headline: headlineTable(input.results, input.checks),
    issue: demo ? issueTable(demo) : "(demo-burst-3x was not run)",
    hints: hintTable(input.results, input.defaultPolicy),
    sweep: sweepTable(input.sweeps, input.defaultPolicy),
    sweepTargets: sweepTargetsLine(input.sweeps, input.defaultPolicy),
    defaults: defaultsList(),
    heldOutVariants: heldOutVariantsNote(input.variants, heldOut),
    aheadVariantsTwin: aheadVariantsInTwin(input.variants, heldOut, input.twin, input.defaultPolicy),
    headerlessSustainedGap: headerlessGapPts(input.results, input.defaultPolicy, "sustained-1.3x"),
    heldOutHeaderlessSustainedGap: heldOutHeaderlessGapPts(input.heldOutScenarios ?? [], "sustained-1.3x"),
    headerlessWithin: headerlessWithinNote(input.results, input.defaultPolicy),
    idleWhileWaiting: idleWhileWaitingNote(input.results, input.defaultPolicy),
    ledgerRecord: ledgerRecordNote(input.results, input.defaultPolicy),
    standingFromStartRow: targetsRow("standing-from-start"),
    standingFromStartWithin5: horizonShift(input.variants, "standing-from-start", 5),
    standingFromStartWithin30: horizonShift(input.variants, "standing-from-start", 30),
    bestEffortSecondHalfRow: targetsRow("best-effort-second-half"),
    bestEffortSecondHalfGapChanges: gapChanges(input.variants, "best-effort-second-half"),
    bestEffortNoAgeRow: targetsRow("best-effort-no-age"),
    keptWhenQueuedRow: targetsRow("kept-when-queued"),
    keptWhenQueuedServed: shareChanges(input.variants, "kept-when-queued", servedShare),
    keptWhenQueuedIdle: shareChanges(input.variants, "kept-when-queued", idleShare),
    shedPromiseNeutralRow: targetsRow("shed-promise-neutral"),
    clairvoyantForecastRow: targetsRow("clairvoyant-forecast"),
    knownCapacityRow: targetsRow("known-capacity"),
    perfectInformationRow: targetsRow("perfect-information"),
    knownCapacityPromises: promiseChanges(input.variants, "known-capacity"),
    knownCapacityWaits: waitsRow("known-capacity"),
    twinKnownCapacity: inTwin("known-capacity", [15, 30]),
    twinKnownCapacityGap: twinWorstGap(
      input.twin,
      "after-quiet",
      `${input.defaultPolicy}:known-capacity`,
      input.defaultPolicy,
    ),
    newestFirstOrderRow: targetsRow("newest-first-order"),
    demotedFifoRow: targetsRow("demoted-fifo"),
    freshNextHorizonRow: targetsRow("fresh-next-horizon"),
    freshNextHorizonCurve: horizonChanges(input.variants, "fresh-next-horizon"),
    freshNextHorizonWaits: waitsRow("fresh-next-horizon"),
    lastChanceRow: targetsRow("last-chance"),
    lastChanceP50: p50Row("last-chance"),
    forgetWhenQueuedRow: targetsRow("forget-when-queued"),
    forgetWhenQueuedServed: shareChanges(input.variants, "forget-when-queued", servedShare, 0.5),
    forgetWhenQueuedP50: p50Row("forget-when-queued"),
    forgetWhenQueuedWaits: waitsRow("forget-when-queued"),
    drainingIgnoresDemotedRow: targetsRow("draining-ignores-demoted"),
    drainingIgnoresDemotedP50: p50Row("draining-ignores-demoted"),
    freshPastTargetRow: targetsRow("fresh-past-target"),
    freshPastTargetCurve: horizonChanges(input.variants, "fresh-past-target"),
    freshPastTargetWaits: waitsRow("fresh-past-target"),
    freshPastTargetP50: p50Row("fresh-past-target"),
    fifoWhileStandingRow: targetsRow("fifo-while-standing"),
    fifoWhileStandingP50: p50Row("fifo-while-standing"),
    freshNewestRow: targetsRow("fresh-newest-half"),
    freshNewestCurve: horizonChanges(input.variants, "fresh-newest-half"),
    demotedShareRow: targetsRow("demoted-share-quarter"),
    demotedShareCurve: horizonChanges(input.variants, "demoted-share-quarter"),
    demotedFirstRow: targetsRow("demoted-first-under-8s"),
    demotedFirstCurve: horizonChanges(input.variants, "demoted-first-under-8s"),
    probeBeyondRow: targetsRow("probe-beyond-30s"),
    probeBeyondCurve: horizonChanges(input.variants, "probe-beyond-30s"),
    horizonPackRow: targetsRow("horizon-pack"),
    horizonPackGapChanges: gapChanges(input.variants, "horizon-pack"),
    horizonPackWaits: waitsRow("horizon-pack"),
    twinHorizonPack: inTwin("horizon-pack", [15, 30]),
    twinHorizonPackCold: inTwin("horizon-pack", [15, 30], "cold"),
    candidatesAddUp: gainsAddUp(input.variants, COMBINED_CANDIDATES, "candidates-combined"),
    candidatesRow: targetsRow("candidates-combined"),
    candidatesGapChanges: gapChanges(input.variants, "candidates-combined"),
    candidatesWaits: waitsRow("candidates-combined"),
    twinCandidates: inTwin("candidates-combined", [15, 30, 60]),
    twinCandidatesCold: inTwin("candidates-combined", [15, 30, 60], "cold"),
    candidatesUnpackedRow: targetsRow("candidates-unpacked"),
    twinCandidatesUnpacked: inTwin("candidates-unpacked", [15, 30, 60]),
    twinCandidatesUnpackedCold: inTwin("candidates-unpacked", [15, 30, 60], "cold"),
    sdkRoomRow: targetsRow("sdk-room-off"),
    sdkRoomGapChanges: gapChanges(input.variants, "sdk-room-off"),
    sdkRoomServed: shareChanges(input.variants, "sdk-room-off", servedShare),
    sdkRoomWaits: waitsRow("sdk-room-off"),
    sdkRoomTenRow: targetsRow("sdk-room-10pct"),
    sdkRoomHeaderless: headerlessAgainstVariant(input.variants, heldOut, "sdk-room-off", "sustained-1.3x"),
    twinSdkRoom: inTwin("sdk-room-off", [15, 30]),
    twinSdkRoomCold: inTwin("sdk-room-off", [15, 30], "cold"),
    demotedHeadroomRow: targetsRow("demoted-headroom-1"),
    demotedHeadroomGapChanges: gapChanges(input.variants, "demoted-headroom-1"),
    demotedTimeoutOffRow: targetsRow("demoted-timeout-off"),
    demotedTimeoutOffServed: shareChanges(input.variants, "demoted-timeout-off", servedShare, 0.5),
    demotedTimeoutOffAttempts: attemptsChanges("demoted-timeout-off"),
    demotedQuietOffRow: targetsRow("demoted-quiet-off"),
    demotedQuietOffServed: shareChanges(input.variants, "demoted-quiet-off", servedShare, 0.5),
    demotedQuietOffAttempts: attemptsChanges("demoted-quiet-off"),
    demotedQuietOffGapChanges: gapChanges(input.variants, "demoted-quiet-off"),
    demotedQuiet60Row: targetsRow("demoted-quiet-60"),
    demotedQuiet60Attempts: attemptsChanges("demoted-quiet-60"),
    demotedQuiet60GapChanges: gapChanges(input.variants, "demoted-quiet-60"),
    twinDemotedQuiet60: inTwin("demoted-quiet-60", [15, 30, 60]),
    twinDemotedQuiet60Cold: inTwin("demoted-quiet-60", [15, 30, 60], "cold"),
    twinDemotedQuietOff: inTwin("demoted-quiet-off", [15, 30]),
    twinDemotedQuietOffCold: inTwin("demoted-quiet-off", [15, 30], "cold"),
    twinDemotedTimeoutOff: inTwin("demoted-timeout-off", [15, 30]),
    twinDemotedTimeoutOffCold: inTwin("demoted-timeout-off", [15, 30], "cold"),
    demotedHeadroomMoreSlots: moreSlotsKept(input.variants, input.twin, input.defaultPolicy),
    ...heldSeedsFills(input.heldSeeds),
    twinDemotedHeadroom: inTwin("demoted-headroom-1", [15, 30]),
    twinDemotedHeadroomCold: inTwin("demoted-headroom-1", [15, 30], "cold"),
    twinNewestFirstOrder: inTwin("newest-first-order", [15, 30]),
    twinNewestFirstOrderCold: inTwin("newest-first-order", [15, 30], "cold"),
    twinClairvoyantForecast: inTwin("clairvoyant-forecast", [15]),
    twinClairvoyantForecastGap: twinWorstGap(
      input.twin,
      "after-quiet",
      `${input.defaultPolicy}:clairvoyant-forecast`,
      input.defaultPolicy,
    ),
    shedPromiseNeutralServed: shareChanges(input.variants, "shed-promise-neutral", servedShare),
    shedPromiseNeutralIdle: shareChanges(input.variants, "shed-promise-neutral", idleShare),
    trustByLeadRow: targetsRow("trust-by-lead"),
    trustByLeadGapChanges: gapChanges(input.variants, "trust-by-lead"),
    trustByLeadServed: shareChanges(input.variants, "trust-by-lead", servedShare),
    trustByLeadIdle: shareChanges(input.variants, "trust-by-lead", idleShare),
    trustByLeadPromises: promiseChanges(input.variants, "trust-by-lead"),
    trustByLeadPersistenceRow: targetsRow("trust-by-lead-persistence"),
    trustByLeadPersistenceGapChanges: gapChanges(input.variants, "trust-by-lead-persistence"),
    trustByLeadPersistencePromises: promiseChanges(input.variants, "trust-by-lead-persistence", 5),
    trustByLeadPersistenceIdle: shareChanges(input.variants, "trust-by-lead-persistence", idleShare),
    noProbeRow: targetsRow("no-probe"),
    noProbeGapChanges: gapChanges(input.variants, "no-probe"),
    noProbeWavesServed: servedAgainst(input.variants, "no-probe", "waves"),
    recurringBestEffortRow: targetsRow("recurring-best-effort-off"),
    recurringBestEffortGapChanges: gapChanges(input.variants, "recurring-best-effort-off"),
    recurringBestEffortWavesServed: servedAgainst(input.variants, "recurring-best-effort-off", "waves"),
    recurringBestEffortP50: p50Row("recurring-best-effort-off"),
    probeEveryOverloadRow: targetsRow("probe-every-overload"),
    floorBeforeRiseRow: targetsRow("floor-before-rise"),
    floorBeforeRiseFade5sRow: targetsRow("floor-before-rise-fade-5s"),
    floorBeforeRisePersistenceRow: targetsRow("floor-before-rise-persistence"),
    floorBeforeRiseGapChanges: gapChanges(input.variants, "floor-before-rise"),
    twinFloorBeforeRise: inTwin("floor-before-rise"),
    twinFloorBeforeRiseFade5s: inTwin("floor-before-rise-fade-5s"),
    twinFloorBeforeRiseFade5sCold: inTwin("floor-before-rise-fade-5s", [15], "cold"),
    twinFloorBeforeRisePersistence: inTwin("floor-before-rise-persistence"),
    twinFloorBeforeRisePersistenceCold: inTwin("floor-before-rise-persistence", [15], "cold"),
    twinFloorBeforeRisePersistenceColdGap: twinWorstGap(
      input.twin,
      "cold",
      `${input.defaultPolicy}:floor-before-rise-persistence`,
      input.defaultPolicy,
    ),
    noQueueRefillRow: targetsRow("no-queue-refill"),
    twinNoQueueRefill: inTwin("no-queue-refill", [30, 60]),
    twinNoQueueRefillCold: inTwin("no-queue-refill", [30, 60], "cold"),
    noOverloadFloorRow: targetsRow("no-overload-floor"),
    beforeQueueRefillRow: targetsRow("before-queue-refill"),
    twinQueueRefillAlone: inTwin("no-overload-floor"),
    lowestOverloadFloorRow: targetsRow("lowest-overload-floor"),
    burstFade5sRow: targetsRow("burst-fade-5s"),
    beforeMedianFloorRow: targetsRow("before-median-floor"),
    beforeMedianFloorGapChanges: gapChanges(input.variants, "before-median-floor"),
    twinBeforeMedianFloorQuiet: inTwin("before-median-floor", [15, 30]),
    twinBeforeMedianFloorCold: inTwin("before-median-floor", [15, 30], "cold"),
    twinLowestOverloadFloor: inTwin("lowest-overload-floor", [15, 30]),
    twinBurstFade5s: inTwin("burst-fade-5s", [15, 30]),
    fastFloorOnlyRow: targetsRow("fast-floor-only"),
    fastFloorOnlyGapChanges: gapChanges(input.variants, "fast-floor-only"),
    twinFastFloorOnly: inTwin("fast-floor-only", [15, 30]),
    twinFastFloorOnlyCold: inTwin("fast-floor-only", [15, 30], "cold"),
    e2eQueueRefillAb: e2eAb(input.queueRefillAb?.before, input.queueRefillAb?.after, input.defaultPolicy),
    e2eMedianFloorAb: e2eAb(input.medianFloorAb?.before, input.medianFloorAb?.after, input.defaultPolicy),
    e2eFastFadeAb: e2eAb(input.fastFadeAb?.before, input.fastFadeAb?.after, input.defaultPolicy),
    variants:
      input.variants.length > 0
        ? variantsTable(input.variants, input.heldOutVariants)
        : "(not run: `npm run eval -- --no-variants`)",
  };
  const body = input.template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    const fill = fills[key];
    if (fill === undefined) throw new Error(`unknown placeholder {{${key}}} in eval/retry-policy.md`);
    return fill;
  });
  return `<!-- Generated by \`npm run eval\` from eval/retry-policy.md and docs/evaluation.json; do not edit by hand. -->\n\n${body.trim()}\n`;
}

/** SDK clients' served share less header-less clients', in points, under the default in one scenario ("n/a" if not run). */
function headerlessGapPts(results: readonly ScenarioResult[], defaultPolicy: string, scenario: string): string {
  const result = results.find((r) => r.name === scenario);
  const behind = result && headerlessBehindPts(headerClientShares(result, defaultPolicy));
  return behind === undefined ? "(not run)" : behind.toFixed(1);
}

/**
 * Where header-less clients are within issue 15's 5 points of SDK clients under the default (tuning seeds), and
 * the scenario where they are furthest behind.
 */
function headerlessWithinNote(results: readonly ScenarioResult[], defaultPolicy: string): string {
  const all = results.map((r) => headerClientShares(r, defaultPolicy));
  const gaps = all.flatMap((h) => {
    const gap = headerlessBehindPts(h);
    return gap === undefined ? [] : [{ name: h.name, gap }];
  });
  if (gaps.length === 0) return "(not run)";
  const { met, of } = headerlessWithin(all);
  const widest = gaps.reduce((a, b) => (b.gap > a.gap ? b : a));
  const where = met === of ? "every scenario" : `${met} of ${of} scenarios`;
  return `${where} on the tuning seeds; the gap is widest in \`${widest.name}\`, ${widest.gap.toFixed(1)} points`;
}

/**
 * A scenario's header-less gap (points) under the default and under a variant, on the tuning seeds and the
 * held-out ones, from the variants' summaries.
 */
function headerlessAgainstVariant(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  id: string,
  scenario: string,
): string {
  const gap = (set: readonly VariantSummary[], which: string) =>
    set.find((v) => v.id === which)?.perScenario[scenario]?.headerlessGapPts;
  const pair = (set: readonly VariantSummary[]) => {
    const [def, own] = [gap(set, "default"), gap(set, id)];
    return def == null || own == null
      ? undefined
      : `${def.toFixed(1)} points under the default, ${own.toFixed(1)} in the row`;
  };
  const [tuned, held] = [pair(variants), pair(heldOut)];
  if (!tuned) return "(not run)";
  return `in \`${scenario}\` header-less clients' served share is behind SDK clients' by ${tuned} on the tuning seeds${held ? `, by ${held} held out (below 0: ahead)` : ""}`;
}

/** The same on the held-out seeds ("(not run)" without them). */
function heldOutHeaderlessGapPts(scenarios: readonly HeldOutScenario[], scenario: string): string {
  const shares = scenarios.find((s) => s.name === scenario)?.headerClients;
  const behind = shares && headerlessBehindPts(shares);
  return behind === undefined ? "(not run)" : behind.toFixed(1);
}

/**
 * The scenarios whose worst curve gap differs by at least `minPts` points between the default and a variant
 * (tuning seeds): where a change to the default gained and where it paid.
 */
function gapChanges(variants: readonly VariantSummary[], id: string, minPts = 1): string {
  const [def, own] = [variants[0], variants.find((v) => v.id === id)];
  if (!def || !own) return "(not run)";
  const rows = Object.entries(def.perScenario).flatMap(([name, d]) => {
    const o = own.perScenario[name];
    if (!o) return [];
    const delta = d.worstCurveGap.gapPts - o.worstCurveGap.gapPts;
    const at = (g: { horizonS: number; gapPts: number }) => `${g.gapPts.toFixed(1)} at ${g.horizonS} s`;
    return Math.abs(delta) >= minPts
      ? [{ name, delta, text: `\`${name}\` ${at(d.worstCurveGap)} against ${at(o.worstCurveGap)}` }]
      : [];
  });
  const list = (xs: typeof rows) => (xs.length === 0 ? "none" : xs.map((r) => r.text).join(", "));
  return `worse by ${minPts} point or more in ${list(rows.filter((r) => r.delta < 0))}; better by as much in ${list(rows.filter((r) => r.delta > 0))}`;
}

/**
 * How a variant moves the share served within one horizon against the default (tuning seeds), in points: "higher
 * by a point or more in 11 of 12 scenarios (by up to 34.1 points, `waves`), lower by as much in 0".
 */
function horizonShift(variants: readonly VariantSummary[], id: string, horizonS: number): string {
  const [def, own] = [variants[0], variants.find((v) => v.id === id)];
  if (!def || !own) return "(not run)";
  const shifts = Object.entries(def.perScenario).flatMap(([name, d]) => {
    const [a, b] = [d.servedWithinS?.[String(horizonS)], own.perScenario[name]?.servedWithinS?.[String(horizonS)]];
    return a === undefined || b === undefined ? [] : [{ name, pts: 100 * (b - a) }];
  });
  // The count, then the largest move among them.
  const side = (xs: typeof shifts, count: string) => {
    const most = xs.reduce<(typeof xs)[number] | undefined>(
      (m, x) => (!m || Math.abs(x.pts) > Math.abs(m.pts) ? x : m),
      undefined,
    );
    return most ? `${count} (by up to ${Math.abs(most.pts).toFixed(1)} points, \`${most.name}\`)` : count;
  };
  const [up, down] = [shifts.filter((x) => x.pts >= 1), shifts.filter((x) => x.pts <= -1)];
  return `higher by a point or more in ${side(up, `${up.length} of ${shifts.length} scenarios`)}, lower by as much in ${side(down, String(down.length))}`;
}

/** The default's final served share in one scenario beside a variant's (tuning seeds), e.g. "92.5% against 93.5%". */
function servedAgainst(variants: readonly VariantSummary[], id: string, scenario: string): string {
  const [def, own] = [variants[0]?.perScenario[scenario], variants.find((v) => v.id === id)?.perScenario[scenario]];
  if (!def || !own) return "(not run)";
  return `${(100 * def.servedFraction).toFixed(1)}% against ${(100 * own.servedFraction).toFixed(1)}%`;
}

type ScenarioFigures = VariantSummary["perScenario"][string];

/**
 * The scenarios where a share (`share` of a scenario's figures: the final served share, the idle share) differs by
 * at least `minPts` points between the default and a variant (tuning seeds), the default's share first, each shown
 * by `label` (its percentage unless told).
 */
function shareChanges(
  variants: readonly VariantSummary[],
  id: string,
  share: (figures: ScenarioFigures) => number | undefined,
  minPts = 1,
  label: (figures: ScenarioFigures) => string = (f) => pct(share(f)),
): string {
  const [def, own] = [variants[0], variants.find((v) => v.id === id)];
  if (!def || !own) return "(not run)";
  const rows = Object.entries(def.perScenario).flatMap(([name, d]) => {
    const o = own.perScenario[name];
    const [a, b] = [share(d), o && share(o)];
    return o && a !== undefined && b !== undefined && Math.abs(a - b) * 100 >= minPts
      ? [`\`${name}\` ${label(d)} against ${label(o)}`]
      : [];
  });
  return rows.length === 0 ? "in no scenario" : rows.join(", ");
}

/**
 * The share of the ledger's promises that ended broken under a variant against the default's (none ended counts
 * as 0), in the scenarios where it moves by `minPts` or more, with the promises each made: "`burst-3x` 13.7% (1200
 * made) against 0.0% (900 made)" (the default first).
 */
function promiseChanges(variants: readonly VariantSummary[], id: string, minPts = 1): string {
  return shareChanges(
    variants,
    id,
    (f) => f.promisesBrokenShare ?? 0,
    minPts,
    (f) =>
      f.promisesBrokenShare === undefined
        ? "none ended"
        : `${pct(f.promisesBrokenShare)} (${f.promisesMade ?? "?"} made)`,
  );
}

/**
 * A variant's mean waits (what the completion curve does not count) against the default's: summed over the
 * scenarios on both seed sets, in how many scenarios it is longer by `minS` or more, and where most.
 */
function meanWaitAgainstDefault(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  id: string,
  minS = 0.1,
): string {
  const [def, own] = [variants[0], variants.find((v) => v.id === id)];
  if (!def || !own) return "(not run)";
  const [defHeld, ownHeld] = [heldOut[0], heldOut.find((v) => v.id === id)];
  const held =
    defHeld && ownHeld
      ? ` (held-out ${ownHeld.meanWaitSumS.toFixed(1)} s against ${defHeld.meanWaitSumS.toFixed(1)} s)`
      : "";
  const rows = Object.entries(def.perScenario).flatMap(([name, d]) => {
    const o = own.perScenario[name];
    return o ? [{ name, own: o.meanWaitS, def: d.meanWaitS, delta: o.meanWaitS - d.meanWaitS }] : [];
  });
  const longer = rows.filter((r) => r.delta >= minS);
  const shorter = rows.filter((r) => r.delta <= -minS);
  const most = longer.reduce<(typeof rows)[number] | undefined>((a, r) => (!a || r.delta > a.delta ? r : a), undefined);
  return `its mean waits sum to ${own.meanWaitSumS.toFixed(1)} s against the default's ${def.meanWaitSumS.toFixed(1)} s${held}; longer by ${minS} s or more in ${longer.length} of ${rows.length} scenarios${most ? `, the most in \`${most.name}\` (${most.own.toFixed(1)} s against ${most.def.toFixed(1)} s)` : ""}, shorter in ${shorter.length}`;
}

/**
 * The sustained overload's p50 time to success under a variant beside the default's, on the tuning seeds and the
 * held-out ones, e.g. "4.9 s against the default's 4.5 s (held-out 5.1 s against 4.8 s)".
 */
function sustainedP50AgainstDefault(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  id: string,
): string {
  const p50 = (list: readonly VariantSummary[], key: string) =>
    list.find((v) => v.id === key)?.perScenario["sustained-1.3x"]?.timeToSuccessP50S;
  const s = (v: number | null | undefined) => (v === null || v === undefined ? "n/a" : `${v.toFixed(2)} s`);
  const held = heldOut.length > 0 ? ` (held-out ${s(p50(heldOut, id))} against ${s(p50(heldOut, "default"))})` : "";
  return `the sustained overload's p50 time to success is ${s(p50(variants, id))} against the default's ${s(p50(variants, "default"))}${held}`;
}

/** The default's `freshNewestShare` and `freshNewestWhen`, as the defaults list says them. */
function freshNewestProse(a: BookingAdmission): string {
  const share = a.freshNewestShare ?? 0;
  if (share <= 0) return "no share of their dispatches goes to the newest";
  const when =
    a.freshNewestWhen === "standing" ? "while the queue stands (`booking.freshNewestWhen` = `standing`)" : "always";
  const part = share >= 1 ? "every dispatch goes" : `${share} of the dispatches go`;
  return `${when} ${part} to the newest that can still be answered within 5 s of its arrival (\`booking.freshNewestShare\` = ${share}${share >= 1 ? "; adaptive LIFO" : ""})`;
}

/**
 * Where a variant's completion curve moves against the default's, horizon by horizon (tuning seeds): in how many
 * scenarios it serves more (by `minPts` or more) and the most, in how many less and the most.
 */
function horizonChanges(variants: readonly VariantSummary[], id: string, minPts = 0.5): string {
  const [def, own] = [variants[0], variants.find((v) => v.id === id)];
  if (!def || !own) return "(not run)";
  const names = Object.keys(def.perScenario);
  const parts = COMPLETION_HORIZONS_S.map((h) => {
    const deltas = names.flatMap((name) => {
      const [d, o] = [
        def.perScenario[name]?.servedWithinS?.[String(h)],
        own.perScenario[name]?.servedWithinS?.[String(h)],
      ];
      return d === undefined || o === undefined ? [] : [{ name, pts: 100 * (o - d) }];
    });
    const more = deltas.filter((x) => x.pts >= minPts).sort((a, b) => b.pts - a.pts);
    const less = deltas.filter((x) => x.pts <= -minPts).sort((a, b) => a.pts - b.pts);
    const most = (xs: typeof deltas) =>
      xs[0] ? ` (${xs[0].pts > 0 ? "+" : ""}${xs[0].pts.toFixed(1)} in \`${xs[0].name}\`)` : "";
    return `at ${h} s more in ${more.length}${most(more)} and less in ${less.length}${most(less)}`;
  });
  return `of ${names.length} scenarios, it serves ${parts.join("; ")}`;
}

const servedShare = (f: ScenarioFigures) => f.servedFraction;
const idleShare = (f: ScenarioFigures) => f.idleWhileWaitingFraction;

/**
 * The default's promises over the scenarios (`RunMetrics.ledger`): the range of the share broken, of those that
 * ended, and of the trust they were made at, each with its scenario.
 */
function ledgerRecordNote(results: readonly ScenarioResult[], defaultPolicy: string): string {
  const rows = results.flatMap((r) => {
    const l = r.policies.find((p) => p.id === defaultPolicy)?.metrics.ledger;
    const ended = l ? promisesEnded(l) : 0;
    return l && ended > 0 && l.trustAtPromise !== null
      ? [{ name: r.name, broken: l.broken / ended, trust: l.trustAtPromise }]
      : [];
  });
  if (rows.length === 0) return "(not run)";
  const by = (f: (r: (typeof rows)[number]) => number) => [...rows].sort((a, b) => f(a) - f(b));
  const broken = by((r) => r.broken);
  const trust = by((r) => r.trust);
  const [fewest, most] = [broken[0], broken.at(-1)] as [(typeof rows)[number], (typeof rows)[number]];
  const [lowest, highest] = [trust[0], trust.at(-1)] as [(typeof rows)[number], (typeof rows)[number]];
  return `of the promises that ended, ${pct(fewest.broken)} were broken in \`${fewest.name}\` and up to ${pct(most.broken)} in \`${most.name}\`, made at a mean trust from ${lowest.trust.toFixed(2)} (\`${lowest.name}\`) to ${highest.trust.toFixed(2)} (\`${highest.name}\`)`;
}

/**
 * The default's idle while waiting beside the other policies': in how many scenarios it is the highest, its
 * largest, and the most any other policy leaves.
 */
function idleWhileWaitingNote(results: readonly ScenarioResult[], defaultPolicy: string): string {
  const idle = (p: PolicyResult) => p.metrics.idleWhileWaitingFraction;
  const rows = results.flatMap((r) => {
    const own = r.policies.find((p) => p.id === defaultPolicy);
    const others = r.policies.filter((p) => p.id !== defaultPolicy);
    return own && others.length > 0 ? [{ name: r.name, own, others }] : [];
  });
  if (rows.length === 0) return "(not run)";
  const highest = rows.filter((r) => r.others.every((p) => idle(p) < idle(r.own))).length;
  const worst = rows.reduce((a, b) => (idle(b.own) > idle(a.own) ? b : a));
  const otherMax = rows
    .flatMap((r) => r.others.map((p) => ({ name: r.name, p })))
    .reduce((a, b) => (idle(b.p) > idle(a.p) ? b : a));
  return `the most of all policies in ${highest} of ${rows.length} scenarios, up to ${pct(idle(worst.own))} of the fleet's slot-seconds (\`${worst.name}\`), where the most any other policy leaves in any scenario is ${pct(idle(otherMax.p))} (\`${otherMax.p.id}\` in \`${otherMax.name}\`)`;
}

/** A variant's summed worst curve gaps beside the default's, on the tuning and held-out seeds. */
function variantGapsAgainstDefault(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  id: string,
): string {
  const pts = (v: VariantSummary | undefined) => (v?.worstCurveGapSumPts ?? Number.NaN).toFixed(1);
  const of = (list: readonly VariantSummary[], key: string) => list.find((v) => v.id === key);
  return `${pts(of(variants, id))} points against ${pts(of(variants, "default"))}, held-out ${pts(of(heldOut, id))} against ${pts(of(heldOut, "default"))}`;
}

/** A variant's scenarios meeting each target, beside the default's, on the tuning and held-out seeds. */
function variantTargetsAgainstDefault(
  variants: readonly VariantSummary[],
  heldOut: readonly VariantSummary[],
  id: string,
): string {
  const of = (list: readonly VariantSummary[], key: string) => list.find((v) => v.id === key);
  const [own, def, ownHeld, defHeld] = [
    of(variants, id),
    of(variants, "default"),
    of(heldOut, id),
    of(heldOut, "default"),
  ];
  if (!own || !def) return "(not run)";
  const targets = [
    ["attempts", "the attempts target"],
    ["curve", "the curve target"],
    ["served", "the served target"],
    ["oracle", "the oracle target"],
  ] as const;
  const met = targets
    .map(([key, name]) => {
      const held = ownHeld && defHeld ? ` (held-out ${ownHeld.met[key]} against ${defHeld.met[key]})` : "";
      return `${name} in ${own.met[key]} of ${own.scenarios} scenarios against the default's ${def.met[key]}${held}`;
    })
    .join(", ");
  return `its row meets ${met}; summed worst curve gaps ${variantGapsAgainstDefault(variants, heldOut, id)}`;
}

/** docs/e2e-twin.json: per twin (cold, after a quiet spell), each policy's pooled measures. */
export interface E2eTwinRun {
  /** The arrival seeds each twin pools. */
  seeds?: readonly number[];
  /**
   * The default on one router through `bursts` copies of the end-to-end phases, as the end-to-end run's router
   * lives its seeds (eval/e2e-twin-scenarios.ts, `e2eChainedTwin`); runs before it was recorded lack it.
   */
  chained?: {
    bursts: number;
    quietS: number;
    policy: string;
    refusalsPerBurst: number;
    attemptsPerOffered: number;
    ledger?: LedgerMetrics;
  };
  twins: E2eTwinFigures[];
  /**
   * The twins again replaying the end-to-end runs' own arrivals (`runFile`'s seeds), the end-to-end policies only,
   * with the default on one router through those runs, how far every twin is from the real runs, and the replayed
   * cold twin's answers per second in the saturated window; runs before it was recorded lack it.
   */
  replay?: {
    runFile: string;
    runSeeds: readonly number[];
    realRuns: readonly string[];
    twins: E2eTwinFigures[];
    chained: {
      bursts: number;
      quietS: number;
      policy: string;
      servedWithinS: Record<string, number>;
      refusalsPerBurst: number;
      attemptsPerOffered: number;
      ledger?: LedgerMetrics;
    };
    fit: (TwinFit & { twin: string; arrivals: "own" | "replayed" })[];
    /** The replayed twins against the runs of today's default (`latestRuns`); files before it was recorded lack it. */
    latestRuns?: readonly string[];
    latestFit?: (TwinFit & { twin: string; arrivals: "replayed" })[];
    /** The first of `latestRuns` fitted to the second: how far two real runs of the same code are apart. */
    latestRunsApart?: TwinFit;
    /**
     * The replayed twins on the arrivals of an end-to-end run on seeds no earlier run used (`runFile`, made with
     * `--first-seed`), the end-to-end policies only, and how far each is from that run; absent without such a run.
     */
    held?: {
      runFile: string;
      runSeeds: readonly number[];
      twins: E2eTwinFigures[];
      fit: (TwinFit & { twin: string; arrivals: "replayed" })[];
    };
    saturated: { windowS: readonly [number, number]; twinRps: number };
  };
  /**
   * Run 24's twin: the cold twin under the spike train (`schedule`), replaying that run's arrivals (`runFile`'s
   * seeds), the end-to-end policies, and how far it is from that run; files before it was recorded lack it.
   */
  spikes?: {
    runFile: string;
    schedule: string;
    runSeeds: readonly number[];
    twin: string;
    seeds: readonly number[];
    policies: E2eTwinFigures["policies"];
    fit: TwinFit;
  };
}

/** One twin's figures per policy in `docs/e2e-twin.json`. */
export interface E2eTwinFigures {
  id: string;
  policies: {
    id: string;
    servedFraction: number;
    servedWithinS: Record<string, number>;
    attemptsPerOffered: number;
    /** Refused attempts (every reason; runs before it was recorded lack it). */
    refusals?: number;
    /** `booked_capacity` and its variants: the ledger's promises (`RunMetrics.ledger`). */
    ledger?: LedgerMetrics;
  }[];
}

/**
 * Whether the variants' gains add up: each one's change of the summed worst curve gaps from the default's (tuning
 * seeds), their total, and the change of the variant that makes them all at once.
 *
 * @example
 * ```ts
 * gainsAddUp(json.variants, ["no-queue-refill", "horizon-pack"], "candidates-combined");
 * // "`no-queue-refill` +0.7, `horizon-pack` +2.1 (together +2.8 points); all at once +5.6"
 * ```
 */
export function gainsAddUp(variants: readonly VariantSummary[], ids: readonly string[], combined: string): string {
  const sum = (id: string) => variants.find((v) => v.id === id)?.worstCurveGapSumPts;
  const base = sum("default");
  const all = sum(combined);
  const each = ids.map((id) => [id, sum(id)] as const);
  if (base === undefined || all === undefined || each.some(([, v]) => v === undefined)) return "(not run)";
  const signed = (pts: number) => `${pts >= 0 ? "+" : ""}${pts.toFixed(1)}`;
  const gains = each.map(([id, v]) => [id, (v as number) - base] as const);
  const total = gains.reduce((acc, [, g]) => acc + g, 0);
  return `${gains.map(([id, g]) => `\`${id}\` ${signed(g)}`).join(", ")} (together ${signed(total)} points); all at once ${signed(all - base)}`;
}

/** A twin row after a quiet spell beside the default's: attempts per offered request and the shares within `horizonsS`. */
function twinAgainstDefault(
  twin: E2eTwinRun | undefined,
  id: string,
  defaultPolicy: string,
  horizonsS: readonly number[] = [30],
  twinId: E2eTwinId = "after-quiet",
): string {
  const run = twin ? targetTwins(twin).find((t) => t.id === twinId) : undefined;
  const [own, def] = [run?.policies.find((p) => p.id === id), run?.policies.find((p) => p.id === defaultPolicy)];
  if (!own || !def) return "(not run: npm run eval:e2e-twin)";
  const within = (p: typeof own) => horizonsS.map((h) => pct(p.servedWithinS[h])).join(" / ");
  const when = E2E_TWINS.find((t) => t.id === twinId)?.label;
  return `${when} it makes ${own.attemptsPerOffered.toFixed(3)} attempts per offered request against the default's ${def.attemptsPerOffered.toFixed(3)}, and serves ${within(own)} within ${horizonsS.join(" / ")} s against ${within(def)}`;
}

/**
 * Two and four slots kept for fresh arrivals (rows `demoted-headroom-2` and `demoted-headroom-4`) beside one and
 * none on the summed worst curve gaps (tuning seeds), and whether each meets the twin's curve target after a quiet
 * spell.
 */
function moreSlotsKept(
  variants: readonly VariantSummary[],
  twin: E2eTwinRun | undefined,
  defaultPolicy: string,
): string {
  const sum = (id: string) => variants.find((v) => v.id === id)?.worstCurveGapSumPts.toFixed(1);
  const [two, four, one, none] = [
    sum("demoted-headroom-2"),
    sum("demoted-headroom-4"),
    sum("demoted-headroom-1"),
    sum("default"),
  ];
  if (!two || !four || !one || !none) return "(not run)";
  const curve = (id: string) => {
    const met = twin ? twinTargets(twin, "after-quiet", `${defaultPolicy}:${id}`, defaultPolicy)?.met.curve : undefined;
    return met === undefined ? "(not in the twin: npm run eval:e2e-twin)" : met ? "meets" : "misses";
  };
  return `summed worst curve gaps of ${two} (two, row \`demoted-headroom-2\`) and ${four} points (four, row \`demoted-headroom-4\`) against ${one} (one) and the default's ${none}; in the end-to-end run's twin after a quiet spell it ${curve("demoted-headroom-2")} the curve target with two slots and ${curve("demoted-headroom-4")} it with four`;
}

/** How far a policy in the default's place is behind the best reference policy in a twin, at its worst horizon. */
function twinWorstGap(twin: E2eTwinRun | undefined, twinId: E2eTwinId, id: string, defaultPolicy: string): string {
  const check = twin ? twinTargets(twin, twinId, id, defaultPolicy) : undefined;
  if (!check) return "(not run: npm run eval:e2e-twin)";
  return `${(-100 * check.worst.gap).toFixed(2)} points behind the best reference policy at ${check.worst.horizonS} s`;
}

/** The default's end-to-end row without (`before`) and with (`after`) a change, same arrivals. */
function e2eAb(before: E2eOpenAiRun | undefined, after: E2eOpenAiRun | undefined, defaultPolicy: string): string {
  const [b, a] = [before, after].map((run) => run?.policies.find((p) => p.id === defaultPolicy));
  if (!b || !a) return "(not run)";
  const curve = (p: NonNullable<typeof a>) => [5, 15, 30, 60].map((h) => pct(p.servedWithinS[h])).join(" / ");
  return `served ${pct(a.servedFraction)} against ${pct(b.servedFraction)}, ${curve(a)} within 5 / 15 / 30 / 60 s against ${curve(b)}, and ${a.attemptsPerOffered.toFixed(3)} attempts per offered request against ${b.attemptsPerOffered.toFixed(3)}`;
}
