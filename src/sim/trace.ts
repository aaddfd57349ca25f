import type { ClientStyle } from "./client-model";

/** One attempt of a logical request, as its client saw it. */
export interface AttemptRecord {
  /** When the attempt reached the router, ms. */
  atMs: number;
  /** Admitted: the router placed it on a replica. Rejected: refused (at once, or shed from the queue later). */
  outcome: "admitted" | "rejected";
  /** When the router answered (admission or refusal), ms. */
  answeredAtMs: number;
  /** For a retry: whether its delay was the server's hint (else the client's own backoff). */
  hinted: boolean;
  /** For a refusal: the hint sent (ms), if any. */
  hintMs?: number;
  status?: number;
  reason?: string;
}

/** The life of one logical request. */
export interface RequestTrace {
  id: number;
  /** When the client sent its first attempt, ms. */
  arrivalMs: number;
  /** Which kind of client sent it, and its round trip. */
  client: ClientStyle;
  roundTripMs: number;
  attempts: AttemptRecord[];
  /** served: its response completed; gave_up: out of retries; unfinished: still waiting when the run ended. */
  result: "served" | "gave_up" | "unfinished";
  /** When the client had the whole response (served only), ms. */
  completedAtMs?: number;
  outputTokens: number;
}

/** A rejection's suggested delay beside the observed queue-drain time (from RouterCore's tracker). */
export interface DrainSample {
  atMs: number;
  suggestedS: number;
  observedS: number;
}

/**
 * One second of a run's `booked_capacity` ledgers (summed over the router shards): the promises made in it, those
 * that ended in it (kept, broken, no-show: `PromiseOutcomes`), and the ledgers' mean trust at its end.
 */
export interface LedgerSample {
  /** The end of the second, ms. */
  atMs: number;
  made: number;
  kept: number;
  broken: number;
  noShow: number;
  trust: number;
}

/** Everything a run leaves for the metrics. */
export interface RunTrace {
  requests: RequestTrace[];
  drainSamples: DrainSample[];
  /** Slot-seconds of capacity left idle while at least one client slept in backoff (min of the two, integrated). */
  idleWhileWaitingSlotS: number;
  /**
   * Slots of the fleet (replicas x maxOngoingRequests; averaged over the span when replicas are lost) and the
   * simulated span, for normalising.
   */
  fleetSlots: number;
  /**
   * Replicas lost part way (the scenario's `fleet.loss`): the fleet's slots before `atS` and from it on, for
   * figures taken over part of the run (the timeline's bins). Absent: the fleet had `fleetSlots` throughout.
   */
  slotLoss?: { atS: number; slotsBefore: number; slotsAfter: number };
  spanS: number;
  /** Seconds of offered traffic (the phases, without the tail). */
  trafficS: number;
  /** Second by second, what the routers' ledgers promised and how it ended; absent for policies without one. */
  ledger?: LedgerSample[];
}
