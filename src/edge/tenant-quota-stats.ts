/**
 * A tenant quota object's counts since it started (memory only, like its buckets). With quota leases they lag by
 * what isolates hold: the admissions a lease served, their charges and their corrections are counted when it is
 * returned.
 */
export interface TenantQuotaStats {
  /** Requests the quota admitted (a request later refused for capacity is given back to the quota, still counted). */
  admitted: number;
  /** Requests the quota refused. */
  refused: number;
  /** Tokens charged: estimates at admission, plus overruns found in the answers' usage. */
  tokensCharged: number;
  /** Tokens given back: the estimate's excess over the answers' usage, and refused requests' charges. */
  tokensRefunded: number;
}
