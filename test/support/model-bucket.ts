import { QUOTA_PERIOD_MS } from "../../src/core/tenant-quota";

/**
 * The quota property tests' model of one token bucket (test/node/core/tenant-quota.property.test.ts,
 * test/edge/tenant-quota-lease.property.test.ts): the exact refill line of `TokenBucket`, `limit` units a minute,
 * holding at most `limit`, written from its JSDoc rather than its code.
 *
 * @example
 * ```ts
 * const b = { limit: 60, level: 0, atMs: 0 };
 * levelAt(b, 30_000); // 30
 * fitsLevel(levelAt(b, 30_000), 31); // "no"
 * ```
 */
export interface ModelBucketLine {
  limit: number;
  /** Units held at `atMs` (below 0 while a debt is repaid). */
  level: number;
  atMs: number;
}

/** The documented slack of the refill's float arithmetic (units and ms). */
export const EPS = 1e-6;
/** How far two float computations of the same exact value may differ here. */
export const NEAR = 1e-8;

/** Units refilled per millisecond. */
export const rate = (b: ModelBucketLine) => b.limit / QUOTA_PERIOD_MS;

/** The level at `t` (never above the limit; a clock that goes back refills nothing). */
export const levelAt = (b: ModelBucketLine, t: number) =>
  Math.min(b.limit, b.level + Math.max(0, t - b.atMs) * rate(b));

/** Moves the model to `t`. */
export function refill(b: ModelBucketLine, t: number): void {
  b.level = levelAt(b, t);
  b.atMs = Math.max(b.atMs, t);
}

/** Whether `need` fits a level (with the documented slack); "either" within float noise of the boundary. */
export function fitsLevel(level: number, need: number): "yes" | "no" | "either" {
  const d = level + EPS - need;
  return d >= NEAR ? "yes" : d < -NEAR ? "no" : "either";
}
