import type { ArrivalBin, ArrivalCurves } from "./arrival-bins";

/** The horizons the section shows: where the default's gaps are (its 5 s and 120 s shares are near the best). */
const SHOWN_HORIZONS_S = [15, 30, 60] as const;

const cell = (bin: ArrivalBin | undefined) =>
  bin ? SHOWN_HORIZONS_S.map((h) => `${Math.round(100 * (bin.servedWithinS[String(h)] ?? 0))}`).join(" / ") : "-";

/**
 * The section of docs/evaluation.md that shows, for one scenario, which requests each policy serves late: the
 * completion curve by first arrival (`arrivalCurves`), the default beside the policies it is held to and the
 * clairvoyant bound's schedule, and where the default is furthest behind and furthest ahead of static 30 s.
 * Bins where every policy served every request within 15 s are left out. Empty without a static-30 row.
 *
 * @example
 * ```ts
 * arrivalsSection(json.arrivals); // "## Which requests the default serves late ..."
 * ```
 */
export function arrivalsSection(curves: ArrivalCurves): string {
  const [own, ...others] = curves.policies;
  const static30 = curves.policies.find((p) => p.id === "static-30");
  if (!own || !static30) return "";
  const binOf = (bins: readonly ArrivalBin[], fromS: number) => bins.find((b) => b.fromS === fromS);
  const series = [...curves.policies.map((p) => p.bins), ...(curves.bound ? [curves.bound] : [])];
  const shown = own.bins.filter((bin) =>
    series.some((bins) => (binOf(bins, bin.fromS)?.servedWithinS["15"] ?? 1) < 0.995),
  );
  const span = (bin: ArrivalBin) => `${bin.fromS}-${bin.fromS + curves.binS} s`;
  const lines = [
    `## Which requests the default serves late (${curves.scenario}, by first arrival)\n`,
    `The curve target pools every request of a run; which of them a policy serves late is the trade behind each gap. ${curves.scenario}'s requests in bins of ${curves.binS} s by their first attempt (its seeds pooled), and the share of each bin served within ${SHOWN_HORIZONS_S.join(" / ")} s (%), for the default, the policies it is held to here, and the clairvoyant bound's schedule (above; of the schedules that reach its margin, one that serves the most within the horizons: a relaxation, not a policy). Bins where everyone served every request within 15 s are left out.\n`,
    `| first attempt | requests | ${[own, ...others].map((p) => p.id).join(" | ")}${curves.bound ? " | clairvoyant bound" : ""} |`,
    `| --- | --- | ${[own, ...others].map(() => "---").join(" | ")}${curves.bound ? " | ---" : ""} |`,
  ];
  for (const bin of shown) {
    const cells = [own, ...others].map((p) => cell(binOf(p.bins, bin.fromS)));
    if (curves.bound) cells.push(cell(binOf(curves.bound, bin.fromS)));
    lines.push(`| ${span(bin)} | ${bin.requests} | ${cells.join(" | ")} |`);
  }
  // Where the default is furthest behind static 30 s at 60 s, and furthest ahead at 15 s.
  const diff = (bin: ArrivalBin, h: string) =>
    (bin.servedWithinS[h] ?? 0) - (binOf(static30.bins, bin.fromS)?.servedWithinS[h] ?? 0);
  const behind = shown.reduce<ArrivalBin | undefined>(
    (a, b) => (!a || diff(b, "60") < diff(a, "60") ? b : a),
    undefined,
  );
  const ahead = shown.reduce<ArrivalBin | undefined>(
    (a, b) => (!a || diff(b, "15") > diff(a, "15") ? b : a),
    undefined,
  );
  if (behind && ahead && diff(behind, "60") < 0 && diff(ahead, "15") > 0) {
    const share = (bin: ArrivalBin, h: string) => `${Math.round(100 * (bin.servedWithinS[h] ?? 0))}%`;
    const s30 = (bin: ArrivalBin, h: string) => share(binOf(static30.bins, bin.fromS) as ArrivalBin, h);
    const burst = curves.burst;
    const during = (bin: ArrivalBin) =>
      burst !== undefined && bin.fromS >= burst.fromS && bin.fromS + curves.binS <= burst.toS;
    const after = (bin: ArrivalBin) => burst !== undefined && bin.fromS >= burst.toS;
    // Without a burst, the load of the phase the bin falls in (waves: "in a 2x phase", "in a 0.3x phase").
    const phase = (bin: ArrivalBin) =>
      curves.phases?.find((p) => bin.fromS >= p.fromS && bin.fromS + curves.binS <= p.toS);
    const where = (bin: ArrivalBin) => {
      if (during(bin)) return " (during the burst)";
      if (after(bin)) return " (after the burst)";
      const load = burst === undefined ? phase(bin)?.load : undefined;
      return load === undefined ? "" : ` (in a ${load}x phase)`;
    };
    const trade =
      during(behind) && after(ahead)
        ? " Static 30 s sends a burst's refused requests back after it and serves them in arrival order with the requests that arrive then; the default gives the capacity after a burst first to the requests that arrive then (demotion: `docs/retry-policy.md`) and serves the burst's refused requests in what they leave."
        : "";
    // Where the default is furthest behind the best of the policies shown at 60 s (static 30 s or another).
    const bestAt = (bin: ArrivalBin, h: string) =>
      others
        .map((p) => ({ id: p.id, share: binOf(p.bins, bin.fromS)?.servedWithinS[h] ?? 0 }))
        .reduce((a, b) => (b.share > a.share ? b : a));
    const lag = (bin: ArrivalBin) => (bin.servedWithinS["60"] ?? 0) - bestAt(bin, "60").share;
    const furthest = shown.reduce<ArrivalBin | undefined>((a, b) => (!a || lag(b) < lag(a) ? b : a), undefined);
    const best = furthest ? bestAt(furthest, "60") : undefined;
    const beyond =
      furthest && best && (furthest !== behind || best.id !== "static-30") && lag(furthest) < 0
        ? ` Furthest behind any policy shown at 60 s: those first sent at ${span(furthest)}${where(furthest)}, ${share(furthest, "60")} within 60 s against ${best.id}'s ${Math.round(100 * best.share)}%.`
        : "";
    lines.push(
      "",
      `Where the default is furthest behind static 30 s at 60 s: the requests first sent at ${span(behind)}${where(behind)}, ${share(behind, "60")} of them served within 60 s against ${s30(behind, "60")}. Where it is furthest ahead at 15 s: those first sent at ${span(ahead)}${where(ahead)}, ${share(ahead, "15")} within 15 s against ${s30(ahead, "15")}.${beyond}${trade}`,
    );
  }
  lines.push("");
  return lines.join("\n");
}
