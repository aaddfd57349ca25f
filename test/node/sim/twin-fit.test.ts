import { describe, expect, it } from "vitest";
import { twinFit } from "../../../src/sim/twin-fit";

const figures = (id: string, c: [number, number, number, number, number], attempts: number) => ({
  id,
  servedWithinS: { "5": c[0], "15": c[1], "30": c[2], "60": c[3], "120": c[4] },
  attemptsPerOffered: attempts,
});

describe("twinFit", () => {
  const run = (shift: number, attempts: number) => ({
    policies: [
      figures("static-30", [0.5 + shift, 0.5 + shift, 0.6 + shift, 0.9 + shift, 1], attempts),
      figures("booked_capacity", [0.55 + shift, 0.6 + shift, 0.8 + shift, 0.99, 1], attempts - 0.05),
    ],
  });

  it("sums the twin's distance to the runs' mean over the policies and the targets' horizons, 120 s left out", () => {
    const twin = [
      figures("static-30", [0.52, 0.52, 0.62, 0.92, 0.5], 1.5),
      figures("booked_capacity", [0.57, 0.62, 0.82, 0.99, 0.5], 1.45),
    ];
    // The runs' mean is run(0.01): the twin is 1 point above it at every horizon but booked_capacity's 60 s.
    const fit = twinFit(twin, [run(0, 1.52), run(0.02, 1.54)]);
    expect(fit.curveAbsErrPts).toBeCloseTo(7, 9);
    expect(fit.curveBiasPts).toBeCloseTo(7, 9);
    expect(fit.attemptsBias).toBeCloseTo(-0.03, 9);
  });

  it("tells a twin that errs both ways from one that is biased: the distance counts both, the bias nets them", () => {
    const twin = [
      figures("static-30", [0.49, 0.51, 0.6, 0.9, 1], 1.5),
      figures("booked_capacity", [0.55, 0.6, 0.8, 0.99, 1], 1.45),
    ];
    const fit = twinFit(twin, [run(0, 1.5)]);
    expect(fit.curveAbsErrPts).toBeCloseTo(2, 9);
    expect(fit.curveBiasPts).toBeCloseTo(0, 9);
    expect(fit.attemptsBias).toBeCloseTo(0, 9);
  });

  it("compares only the policies every run has, and refuses a twin that shares none", () => {
    const twin = [figures("static-30", [0.5, 0.5, 0.6, 0.9, 1], 1.5), figures("variant", [1, 1, 1, 1, 1], 9)];
    expect(twinFit(twin, [run(0, 1.5)]).curveAbsErrPts).toBeCloseTo(0, 9);
    expect(() => twinFit([figures("variant", [1, 1, 1, 1, 1], 1)], [run(0, 1.5)])).toThrow(/no policy/);
    expect(() => twinFit(twin, [])).toThrow(/no policy/);
  });
});
