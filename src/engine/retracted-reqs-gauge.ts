/**
 * `sglang:num_retracted_reqs`, updated as SGLang updates it. SGLang's scheduler keeps a plain number,
 * `num_retracted_reqs`, that a retraction *sets* to the size of that retraction (`= len(retracted_reqs)`, not
 * `+=`); each log line (a prefill line, or a decode line every `decode_log_interval` steps) copies it into the
 * gauge and zeroes the number. So the gauge shows the last retraction of the interval that the latest log line
 * closed, and it keeps showing it until the next line: a scrape right after a line reads what that interval
 * retracted, never a 0 that only means "a line was just written".
 *
 * @example
 * ```ts
 * const g = createRetractedReqsGauge((v) => metrics.numRetractedReqs.set(v));
 * g.retracted(3); // a retraction of 3: the gauge does not move yet
 * g.logLine();    // the gauge reads 3 until the next log line
 * g.logLine();    // an interval without retraction: 0
 * ```
 */
export function createRetractedReqsGauge(set: (value: number) => void) {
  let sinceLastLine = 0;
  return {
    /** A retraction of `count` requests (SGLang assigns, so the latest retraction of an interval wins). */
    retracted(count: number): void {
      sinceLastLine = count;
    },
    /** A prefill or decode log line: publish the interval's value and start a new interval. */
    logLine(): void {
      set(sinceLastLine);
      sinceLastLine = 0;
    },
  };
}
