import { E2E_TARGET_HORIZONS_S } from "./e2e-targets";

/** One policy's figures, as a twin or an end-to-end run records them. */
export interface CurveFigures {
  id: string;
  servedWithinS: Record<string, number>;
  attemptsPerOffered: number;
}

/** How far a twin's figures are from the real runs': what `npm run eval:e2e-twin` reports for each twin. */
export interface TwinFit {
  /** Points of the offered requests, summed over the policies and the end-to-end targets' horizons (5 to 60 s). */
  curveAbsErrPts: number;
  /** The same, signed: above 0, the twin serves more within the horizons than the real runs. */
  curveBiasPts: number;
  /** Attempts per offered request, the twin's less the real runs', averaged over the policies. */
  attemptsBias: number;
}

/**
 * How far a twin of the end-to-end run is from real runs of it: for every policy the twin ran that the runs ran too,
 * and every horizon of the end-to-end targets, the twin's served share less the runs' mean, summed in points (as it
 * is and as a distance), and the attempts per offered request likewise, averaged. A twin whose bias is near zero and
 * whose distance is small predicts the real run; one that serves more at every horizon for every policy describes a
 * faster fleet than the real one.
 *
 * @example
 * ```ts
 * const real = { policies: [{ id: "static-30", servedWithinS: { "5": 0.5, "15": 0.5, "30": 0.6, "60": 0.9 }, attemptsPerOffered: 1.5 }] };
 * twinFit([{ id: "static-30", servedWithinS: { "5": 0.51, "15": 0.51, "30": 0.61, "60": 0.91 }, attemptsPerOffered: 1.48 }], [real]);
 * // { curveAbsErrPts: 4, curveBiasPts: 4, attemptsBias: -0.02 } (to rounding)
 * ```
 */
export function twinFit(
  twin: readonly CurveFigures[],
  runs: readonly { policies: readonly CurveFigures[] }[],
): TwinFit {
  let abs = 0;
  let bias = 0;
  let attempts = 0;
  let compared = 0;
  for (const p of twin) {
    const real = runs.map((run) => run.policies.find((r) => r.id === p.id));
    if (runs.length === 0 || real.some((r) => r === undefined)) continue;
    const mean = (f: (r: CurveFigures) => number) => real.reduce((s, r) => s + f(r as CurveFigures), 0) / real.length;
    for (const h of E2E_TARGET_HORIZONS_S) {
      const d = (p.servedWithinS[String(h)] ?? 0) - mean((r) => r.servedWithinS[String(h)] ?? 0);
      abs += Math.abs(d);
      bias += d;
    }
    attempts += p.attemptsPerOffered - mean((r) => r.attemptsPerOffered);
    compared += 1;
  }
  if (compared === 0) throw new Error("twinFit: no policy of the twin is in every run");
  return { curveAbsErrPts: 100 * abs, curveBiasPts: 100 * bias, attemptsBias: attempts / compared };
}
