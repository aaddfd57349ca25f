/**
 * The scheduler's record of one request: what the client asked for, what it has produced, and which KV
 * slots it holds (a locked cached prefix plus the pages it owns beyond it).
 */
import type { RadixNode } from "./radix-cache.js";
import type { RequestStatus, RequestView, SubmitRequest } from "./types.js";

/**
 * Internal, mutable request; handed out as {@link RequestView}.
 *
 * @example
 * ```ts
 * const r = new Req({ id: "a", promptTokenIds: [1, 2], maxNewTokens: 4 }, 0);
 * r.fillLength; // 2: prompt + output so far
 * ```
 */
export class Req implements RequestView {
  readonly id: string;
  readonly promptTokenIds: readonly number[];
  readonly outputTokenIds: number[] = [];
  readonly maxNewTokens: number;
  readonly ignoreEos: boolean;
  status: RequestStatus = "waiting";
  retractions = 0;
  /** Arrival order. */
  readonly seq: number;
  /** Tokens whose KV is allocated (cached prefix included). */
  kvLength = 0;
  /** Tokens of the locked cached prefix (whole pages); the request owns `[cachedLength, kvLength)`. */
  cachedLength = 0;
  /** The locked prefix's last node, or null (nothing locked). */
  node: RadixNode | null = null;
  /** This request's term in the running reservation sum (clipped remaining max_new_tokens). */
  reserved = 0;
  /** Scratch for admission rounds (lpm ordering). */
  matchLength = 0;

  constructor(request: SubmitRequest, seq: number) {
    this.id = request.id;
    this.promptTokenIds = request.promptTokenIds;
    this.maxNewTokens = request.maxNewTokens;
    this.ignoreEos = request.ignoreEos ?? false;
    this.seq = seq;
  }

  /** Prompt plus output so far: what a (re-)prefill must cover. */
  get fillLength(): number {
    return this.promptTokenIds.length + this.outputTokenIds.length;
  }

  /** Prompt followed by output so far (the key of its KV in the prefix cache). */
  fillTokens(): readonly number[] {
    return this.outputTokenIds.length === 0 ? this.promptTokenIds : this.promptTokenIds.concat(this.outputTokenIds);
  }

  /** Clipped remaining max_new_tokens: what admission holds back for this request. */
  remainingClipped(clip: number): number {
    return Math.min(Math.max(this.maxNewTokens - this.outputTokenIds.length, 0), clip);
  }
}
