/** What the client observed for one request (times in seconds, from its first attempt). */
export interface RequestOutcome {
  success: boolean;
  /** Prompt tokens (the server's usage when reported, else the dataset's count). */
  promptLen: number;
  /** Generated tokens (the server's usage when reported, else the number of content chunks). */
  outputLen: number;
  /** Time to first token, seconds. */
  ttft: number;
  /** Gaps between content chunks after the first, seconds. */
  itl: number[];
  /** End-to-end latency, seconds (includes any Retry-After waits). */
  latency: number;
  /** 429/503 answers retried after the server's Retry-After. */
  retries: number;
  /** The error message of a failed request, "" on success. */
  error: string;
  /** The generated text. */
  text: string;
}
