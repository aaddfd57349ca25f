import type { E2eOutcome } from "./e2e-outcomes";
import type { E2eArrival } from "./e2e-schedule";

/**
 * The messages between `npm run eval:e2e` (the load generator) and its child processes over Node's IPC channel:
 * the client processes (eval/e2e-client.ts) and the delaying proxy (eval/e2e-proxy.ts). Types only.
 */

/** Load generator -> client process: send these arrivals, each at `startAtMs + atS`, and report every outcome. */
export interface E2eRunOrder {
  type: "run";
  runId: number;
  /** The proxy's base URL with `/v1`, where every client sends its requests. */
  baseURL: string;
  model: string;
  /** A request's key is this prefix and its arrival index: its `x-e2e-id`, its API key, its prompt. */
  keyPrefix: string;
  /** The run's start on the shared wall clock (`performance.timeOrigin + performance.now()`, milliseconds). */
  startAtMs: number;
  /** The run is cut this long after its start: requests still running are aborted and reported unfinished. */
  maxRunS: number;
  maxRetries: number;
  outputTokens: number;
  arrivals: E2eArrival[];
}

/** Client process -> load generator. */
export type E2eClientReport =
  | { type: "ready" }
  /** `sendLagMs`: how late the client called the SDK for this request, against its scheduled instant. */
  | { type: "outcome"; runId: number; outcome: E2eOutcome; sendLagMs: number }
  | { type: "done"; runId: number };

/** Load generator -> proxy: how many attempts carried an `x-e2e-id` starting with `prefix` (and forget them). */
export interface E2eAttemptsQuery {
  type: "attempts";
  prefix: string;
}

/** What the proxy saw of a run's attempts: how many, by the status it returned, and requests by attempt count. */
export interface E2eAttemptCounts {
  total: number;
  /** Attempts by the HTTP status returned to the client (`"failed"`: no answer from the Worker; `"pending"`: none yet). */
  byStatus: Record<string, number>;
  /** Requests by how many attempts they made. */
  requestsByAttempts: Record<string, number>;
}

/** Proxy -> load generator. */
export type E2eProxyReport =
  | { type: "ready"; port: number }
  | ({ type: "attempts"; prefix: string } & E2eAttemptCounts);

/** The shared wall clock of the load generator and its children, in milliseconds with sub-millisecond precision. */
export const sharedNowMs = (): number => performance.timeOrigin + performance.now();
