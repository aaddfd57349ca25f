import type { HintSchedule } from "../core/capacity-booking";

/**
 * A table of hints by the refusal's time, in buckets of `bucketS` seconds from `fromS`, one row for a request's first
 * refusal and one for its later ones; `null` (and every time outside the table) leaves the refusal to the ledger.
 * JSON, so that a searched table is recorded as it was run (`docs/hint-search.json`).
 */
export interface HintScheduleTable {
  fromS: number;
  bucketS: number;
  first: (number | null)[];
  later: (number | null)[];
}

/**
 * The ledger's `HintSchedule` for a table: the hint of the bucket the refusal falls in.
 *
 * @example
 * ```ts
 * const schedule = hintScheduleOf({ fromS: 60, bucketS: 5, first: [30, null], later: [5, 5] });
 * schedule(62_000, true); // 30
 * schedule(66_000, true); // undefined: the ledger's hint
 * schedule(66_000, false); // 5
 * schedule(70_000, false); // undefined: past the table
 * ```
 */
export function hintScheduleOf(table: HintScheduleTable): HintSchedule {
  return (nowMs, firstRefusal) => {
    const bucket = Math.floor((nowMs / 1000 - table.fromS) / table.bucketS);
    if (bucket < 0) return undefined;
    return (firstRefusal ? table.first : table.later)[bucket] ?? undefined;
  };
}
