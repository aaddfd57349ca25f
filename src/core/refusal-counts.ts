/** Fingerprints whose refusals are remembered at once by default; the oldest is forgotten beyond this. */
export const DEFAULT_REFUSAL_COUNT_CAPACITY = 8_192;

/**
 * How many times the router refused each request, by fingerprint (every attempt of a request has the same one,
 * whatever client sent it): a request refused as often as its client retries is probably on its last attempt.
 * A bounded map, least recently refused forgotten first, so memory stays bounded under any traffic; a request
 * placed on a replica is forgotten (`RouterCore` calls `forget`; not one shed from the queue: its client was
 * refused once more). Counting by fingerprint rather than by `x-stainless-retry-count` also counts clients that
 * send no SDK headers. It also keeps when each request was first refused: how long its client has been trying
 * (`firstRefusedAtMs`).
 *
 * @example
 * ```ts
 * const counts = new RefusalCounts(2);
 * counts.refused("a", 1_000);
 * counts.refused("a", 6_000);
 * counts.of("a"); // 2
 * counts.firstRefusedAtMs("a"); // 1000
 * counts.refused("b");
 * counts.refused("c"); // "a" is forgotten: only two are remembered
 * counts.of("a"); // 0
 * ```
 */
export class RefusalCounts {
  private readonly counts = new Map<string, { count: number; firstAtMs: number }>();

  constructor(private readonly capacity: number = DEFAULT_REFUSAL_COUNT_CAPACITY) {}

  /** The request was refused once more, at `nowMs` (the router's clock). */
  refused(fingerprint: string | undefined, nowMs = 0): void {
    if (fingerprint === undefined || this.capacity <= 0) return;
    const known = this.counts.get(fingerprint);
    // Re-inserted, so the map's order is least recently refused first.
    this.counts.delete(fingerprint);
    this.counts.set(fingerprint, { count: (known?.count ?? 0) + 1, firstAtMs: known?.firstAtMs ?? nowMs });
    if (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value as string);
  }

  /** The times the request was refused and is still remembered (0 for one never refused, or forgotten). */
  of(fingerprint: string | undefined): number {
    return fingerprint === undefined ? 0 : (this.counts.get(fingerprint)?.count ?? 0);
  }

  /** When the request was first refused (`undefined`: never, or forgotten). */
  firstRefusedAtMs(fingerprint: string | undefined): number | undefined {
    return fingerprint === undefined ? undefined : this.counts.get(fingerprint)?.firstAtMs;
  }

  /** The request was served (placed): its refusals are forgotten. */
  forget(fingerprint: string | undefined): void {
    if (fingerprint !== undefined) this.counts.delete(fingerprint);
  }

  /** Fingerprints remembered now. */
  get tracked(): number {
    return this.counts.size;
  }
}
