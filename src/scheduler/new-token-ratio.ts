/**
 * SGLang's new-token ratio: the fraction of a running request's remaining max_new_tokens that admission holds
 * back for it. It starts high (conservative), decays linearly while decoding goes well, resets when the server
 * goes idle, and is re-estimated from actual progress after a retraction.
 */

/**
 * Parameters of the ratio (SGLang's env defaults).
 *
 * @example
 * ```ts
 * const p: NewTokenRatioParams = { conservativeness: 1, init: 0.7, minFactor: 0.14, decaySteps: 600 };
 * ```
 */
export interface NewTokenRatioParams {
  conservativeness: number;
  init: number;
  minFactor: number;
  decaySteps: number;
}

/**
 * The ratio's state machine.
 *
 * @example
 * ```ts
 * const r = new NewTokenRatio({ conservativeness: 1, init: 0.7, minFactor: 0.14, decaySteps: 600 });
 * for (let i = 0; i < 600; i++) r.decay();
 * r.value; // 0.098 (within float rounding)
 * r.reset(); // 0.7 again
 * ```
 */
export class NewTokenRatio {
  /** `min(init * conservativeness, 1)`. */
  readonly init: number;
  /** `init * minFactor`. */
  readonly min: number;
  /** `(init - min) / decaySteps` per successful decode step. */
  readonly decayPerStep: number;
  value: number;

  constructor(p: NewTokenRatioParams) {
    this.init = Math.min(p.init * p.conservativeness, 1);
    this.min = this.init * p.minFactor;
    this.decayPerStep = (this.init - this.min) / p.decaySteps;
    this.value = this.init;
  }

  /** One decode step whose memory check passed. */
  decay(): void {
    this.value = Math.max(this.value - this.decayPerStep, this.min);
  }

  /** The scheduler went idle. */
  reset(): void {
    this.value = this.init;
  }
}

/**
 * The ratio after a retraction, over the requests that remain:
 * `min(1, (sum out + retractDecodeSteps * n) / (sum maxNew + 1))` (maxNew unclipped).
 *
 * @example
 * ```ts
 * ratioAfterRetraction(30, 2, 200, 20); // (30 + 40) / 201
 * ```
 */
export function ratioAfterRetraction(
  sumOutput: number,
  remaining: number,
  sumMaxNew: number,
  retractDecodeSteps: number,
): number {
  return Math.min(1, (sumOutput + retractDecodeSteps * remaining) / (sumMaxNew + 1));
}
