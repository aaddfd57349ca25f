import { describe, expect, it } from "vitest";
import { gainsAddUp } from "../../../src/sim/report-policy";
import { COMBINED_CANDIDATES, DEFAULT_POLICY_VARIANTS, type VariantSummary } from "../../../src/sim/variants";

/** A variant's summary with only what `gainsAddUp` reads: its summed worst curve gaps. */
const summary = (id: string, worstCurveGapSumPts: number) => ({ id, worstCurveGapSumPts }) as unknown as VariantSummary;

describe("the candidates combined", () => {
  it("is each candidate's change at once, nothing more", () => {
    const byId = (id: string) => DEFAULT_POLICY_VARIANTS.find((v) => v.id === id);
    const merged = { ledger: {}, booking: {} };
    for (const id of COMBINED_CANDIDATES) {
      const v = byId(id);
      expect(v, id).toBeDefined();
      Object.assign(merged.ledger, v?.spec.ledger);
      Object.assign(merged.booking, v?.spec.booking);
    }
    const combined = byId("candidates-combined");
    expect({ ledger: combined?.spec.ledger, booking: combined?.spec.booking }).toEqual(merged);
    // Without packing: the same less horizon-pack's change.
    const unpacked = byId("candidates-unpacked");
    const { horizonPackS: _packed, ...unpackedLedger } = merged.ledger as Record<string, unknown>;
    expect({ ledger: unpacked?.spec.ledger, booking: unpacked?.spec.booking }).toEqual({
      ledger: unpackedLedger,
      booking: merged.booking,
    });
  });

  it("says each variant's gain on the summed gaps, their total and the combination's", () => {
    const variants = [summary("default", -50), summary("a", -49.5), summary("b", -47), summary("ab", -47.2)];
    expect(gainsAddUp(variants, ["a", "b"], "ab")).toBe("`a` +0.5, `b` +3.0 (together +3.5 points); all at once +2.8");
    // A loss is signed too.
    expect(gainsAddUp([...variants, summary("c", -51)], ["c"], "ab")).toBe(
      "`c` -1.0 (together -1.0 points); all at once +2.8",
    );
  });

  it("says it was not run when the default, a variant or the combination is missing", () => {
    const variants = [summary("default", -50), summary("a", -49)];
    expect(gainsAddUp(variants, ["a"], "ab")).toBe("(not run)");
    expect(gainsAddUp(variants, ["a", "b"], "a")).toBe("(not run)");
    expect(gainsAddUp(variants.slice(1), ["a"], "a")).toBe("(not run)");
  });
});
