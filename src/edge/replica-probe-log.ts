import { replicaLabel } from "./replica-label";
import type { ProbeFailure, ProbeResult, ReplicaTarget } from "./replica-probe";

/**
 * The least time between two of one replica's probe log lines (per router shard): a change seen sooner is held,
 * and logged by the first probe after it if the replica is still in its new state, with the changes held counted.
 */
export const PROBE_LOG_QUIET_MS = 30_000;

/**
 * Probes in a row that must miss their deadline before a replica is logged down for it. The router reads one miss as
 * slow, not down (a busy replica's `/load` or `/metrics` can miss a 0.1 s deadline now and then); a replica whose
 * probes keep missing it (a host that drops packets) is still logged, with reason `timeout`.
 */
export const PROBE_LOG_TIMEOUTS_FOR_DOWN = 3;

/** The line written when a replica's probes start failing. */
export interface ReplicaDownLine {
  event: "spillway.replica_down";
  deployment: string;
  shard: number;
  replica: string;
  load: ReplicaTarget["load"];
  /** The failing probe's reason (see `ProbeFailure`), its HTTP status for `status`, and a sentence. */
  reason: ProbeFailure["reason"];
  status?: number;
  detail: string;
  /** Up/down changes since the replica's last line, when more than this one (a flapping replica). */
  changes?: number;
}

/** The line written when a replica that was logged down answers a probe with a count again. */
export interface ReplicaRecoveredLine {
  event: "spillway.replica_recovered";
  deployment: string;
  shard: number;
  replica: string;
  load: ReplicaTarget["load"];
  queueLength: number;
  /** Seconds since its down line. */
  downS: number;
  changes?: number;
}

interface ReplicaLogState {
  /** What its last probe said. */
  up: boolean;
  /** What its last line said (up before any line). */
  loggedUp: boolean;
  lastLineAtMs: number | undefined;
  /** Up/down changes since the last line. */
  changes: number;
  /** Probes in a row that missed their deadline. */
  timeouts: number;
}

/**
 * One router shard's log of its replicas' probe state: one line when a replica's probes start failing
 * (`spillway.replica_down`: its URL, its `load`, and why - HTTP status, unreadable page, refused connection, or
 * {@link PROBE_LOG_TIMEOUTS_FOR_DOWN} missed deadlines in a row...) and one when it answers again (`spillway.replica_recovered`), never one per probe: a dead replica
 * probed every round writes one line, and a flapping one at most one per {@link PROBE_LOG_QUIET_MS}. A replica
 * starts up: one whose first probe succeeds writes nothing. Only probes count here; a replica marked down by a
 * failed request is logged when a probe fails too.
 *
 * @example
 * ```ts
 * const log = new ReplicaProbeLog({ deployment: "llama", shard: 0 }, Date.now);
 * const probe = replicaProber(replicas, credentials, (target, result) => log.observe(target, result));
 * ```
 */
export class ReplicaProbeLog {
  private readonly replicas = new Map<string, ReplicaLogState>();

  constructor(
    private readonly identity: { deployment: string; shard: number },
    private readonly now: () => number,
    private readonly write: (line: string) => void = (line) => console.log(line),
  ) {}

  /** Takes one probe's result; writes a line when the replica's state changed and may be logged now. */
  observe(target: ReplicaTarget, result: ProbeResult): void {
    const nowMs = this.now();
    let state = this.replicas.get(target.url);
    if (!state) {
      state = { up: true, loggedUp: true, lastLineAtMs: undefined, changes: 0, timeouts: 0 };
      this.replicas.set(target.url, state);
    }
    // A missed deadline is slow, not down, until it repeats (PROBE_LOG_TIMEOUTS_FOR_DOWN): before that it changes
    // nothing, so a busy fleet does not write down/recovered pairs.
    state.timeouts = result.answer === "timeout" ? state.timeouts + 1 : 0;
    if (result.answer === "timeout" && state.timeouts < PROBE_LOG_TIMEOUTS_FOR_DOWN) return;
    const up = result.answer !== undefined && result.answer !== "timeout";
    if (up !== state.up) {
      state.up = up;
      state.changes += 1;
    }
    if (state.up === state.loggedUp) return;
    if (state.lastLineAtMs !== undefined && nowMs - state.lastLineAtMs < PROBE_LOG_QUIET_MS) return;
    const common = {
      deployment: this.identity.deployment,
      shard: this.identity.shard,
      replica: replicaLabel(target.url),
    };
    const changes = state.changes > 1 ? { changes: state.changes } : {};
    let line: ReplicaDownLine | ReplicaRecoveredLine;
    if ("failure" in result) {
      const { reason, status, detail } = result.failure;
      line = {
        event: "spillway.replica_down",
        ...common,
        load: target.load,
        reason,
        ...(status === undefined ? {} : { status }),
        detail,
        ...changes,
      };
    } else {
      line = {
        event: "spillway.replica_recovered",
        ...common,
        load: target.load,
        queueLength: result.answer,
        downS: Math.round((nowMs - (state.lastLineAtMs ?? nowMs)) / 1000),
        ...changes,
      };
    }
    state.loggedUp = state.up;
    state.lastLineAtMs = nowMs;
    state.changes = 0;
    this.write(JSON.stringify(line));
  }
}
