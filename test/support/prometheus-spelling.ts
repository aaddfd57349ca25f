/**
 * The valid spellings of a Prometheus sample value, for tests that write exposition pages: `how` picks one (Go's
 * ParseFloat, which the servers' and our parser follow, reads them all as the same double).
 *
 * @example
 * ```ts
 * spellValue(2, 1); // "2e+0"
 * spellValue(Number.POSITIVE_INFINITY, 1); // "Inf"
 * ```
 */
export function spellValue(v: number, how: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return how % 2 === 0 ? "+Inf" : "Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  if (Object.is(v, -0)) return ["-0", "-0.0", "-0e0"][how % 3] as string;
  const shortest = String(v);
  switch (how) {
    case 1:
      return v.toExponential();
    case 2:
      return v.toExponential().toUpperCase();
    case 3:
      return v >= 0 ? `+${shortest}` : shortest;
    case 4:
      return /[.e]/.test(shortest) ? shortest : `${shortest}.0`;
    default:
      return shortest;
  }
}

/** A label value escaped as the exposition format writes it (backslash, double quote, newline). */
export const escapeLabelValue = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
