import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShardStats } from "../../edge/router-protocol";
import type { LoadReport } from "../../engine/index";
import {
  freePort,
  type ManagedProcess,
  startManaged,
  startWorkerOnFreePort,
  startWranglerDev,
  waitForWorker,
} from "../stack";
import { percentile } from "../stats";
import { residentKiBOfGroup } from "./process-memory";

/** What a soak run does. */
export interface SoakOptions {
  /** Port for `wrangler dev` on 127.0.0.1; 0 (or absent) picks a free one. */
  port?: number;
  replicas: number;
  maxOngoingRequests: number;
  maxQueuedRequests: number;
  /** Output tokens per request (ignore_eos): with the engine speed, this sets a request's service time. */
  maxTokens: number;
  engineSpeed: number;
  /** Offered load as a multiple of the fleet's measured capacity. */
  overload: number;
  durationS: number;
  /** Idle time after the load, before the final checks. */
  idleS: number;
  /** Upper bound on requests sent, whatever the rate. */
  maxRequests: number;
  /**
   * A request not answered within this many seconds is abandoned: counted lost (with its phase in `lostExample`),
   * or, during the calibration, fails the soak - a hung request ends the soak with its reason instead of holding it
   * until a test's own timeout. Default 120 (four times the router's queue timeout).
   */
  requestTimeoutS?: number;
  log?: (line: string) => void;
  /** Show wrangler's and workerd's own output (for diagnosis). */
  verbose?: boolean;
  /** Every request the same (one fingerprint), as the soak's runs before 2026-12-05; default: each its own prompt. */
  sameBody?: boolean;
  /** The deployment's `booking` settings (the default policy's admission), over the defaults; e.g. `{ freshNewestShare: 0 }`. */
  booking?: Record<string, unknown>;
}

/** The soak's figures (docs/reliability.md). */
export interface SoakReport {
  capacityReqPerS: number;
  offeredReqPerS: number;
  /** What the generator managed to send per second (below `offeredReqPerS` when the machine is saturated). */
  achievedReqPerS: number;
  sent: number;
  served: number;
  refused: number;
  /** Refusals without a valid Retry-After / retry-after-ms (spillway's; wrangler dev's proxy's are counted apart). */
  refusedWithoutValidHint: number;
  /**
   * Answers of `wrangler dev`'s own proxy Worker, not of spillway: `503 Your worker restarted mid-request` with
   * `retry-after: 0`, which it sends when a POST to the Worker fails on a connection it reused, with no restart of
   * the Worker (cloudflare/workers-sdk issue 14641; docs/reliability.md). Reported, never counted as spillway's.
   */
  devProxyRestarts: number;
  /** Any other answer (5xx, 4xx other than 429/503). */
  otherStatus: Record<number, number>;
  /** Requests that got no response at all (connection errors, or none within `requestTimeoutS`). Goal 0. */
  lost: number;
  /** The first lost request's error (a timeout names `requestTimeoutS`); absent when none was lost. */
  lostExample?: string;
  rejectionLatencyMs: { p50: number; p99: number };
  servedLatencyMs: { p50: number; p99: number };
  after: {
    queueDepth: number;
    activeLeases: number;
    /** The Durable Object's pending `acquire` promises (0 once nothing waits). */
    routerWaiters: number;
    engineRunning: number;
    engineWaiting: number;
  };
  /** The Durable Object's bounded collections after the idle period (see `ShardStats.internal`). */
  routerInternal: ShardStats["internal"] | undefined;
  /** Resident memory of `wrangler dev` + workerd (the Worker and its Durable Object) and of the engines. */
  memoryKiB: {
    workerBefore: number;
    workerPeak: number;
    workerAfter: number;
    enginesBefore: number;
    enginesPeak: number;
    enginesAfter: number;
  };
  /** One refusal without a valid hint, for diagnosis. */
  invalidHintExample?: string;
}

/**
 * One engine server as its own process on a free port, checked by name: a port can be taken between finding it
 * free and the engine binding it, and then whatever took it must not pass for the engine.
 */
async function startEngineProcess(name: string, speed: number): Promise<{ url: string; process: ManagedProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = ["src/engine/main.ts", "--port", String(port), "--speed", String(speed), "--name", name];
    // A short shutdown grace: stopping the soak must not wait 30 s (the default) for a request cut off by it.
    args.push("--disable-access-log", "--log-level", "error", "--shutdown-grace-s", "1");
    // The edge signs every request for its deployment; the engine refuses any signed for another.
    args.push("--deployment", DEPLOYMENT);
    const env = { ...process.env, SPILLWAY_SIGNING_SECRET: SIGNING_SECRET };
    const engine = startManaged(name, "node_modules/.bin/tsx", args, { env, quiet: true });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForWorker(engine, `${url}/health`, 30_000);
      const health = (await (await fetch(`${url}/health`)).json()) as { name?: string };
      if (health.name !== name) throw new Error(`port ${port} is held by something else`);
      return { url, process: engine };
    } catch (error) {
      await engine.stop();
      if (attempt >= 3) throw error;
    }
  }
}

const ADMIN_TOKEN = "soak-admin-token";
const SIGNING_SECRET = "soak-signing-secret";
const DEPLOYMENT = "demo-model";

/**
 * Every router shard's stats of the soak's deployment (`demo-model`), from the Worker's stats route.
 *
 * @example
 * ```ts
 * const [shard] = await routerStats("http://127.0.0.1:8787", "soak-admin-token");
 * ```
 */
export async function routerStats(base: string, token: string): Promise<ShardStats[]> {
  const res = await fetch(`${base}/spillway/stats/demo-model`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { shards: ShardStats[] }).shards;
}

/**
 * Whether an answer is wrangler dev's proxy Worker's, sent when a POST to the Worker fails in transit (see
 * `SoakReport.devProxyRestarts`), and not spillway's: spillway's refusals carry a JSON error body and
 * `retry-after-ms` (or neither Retry-After header at all).
 *
 * @example
 * ```ts
 * isDevProxyRestart(res, await res.text()); // true only for "503 Your worker restarted mid-request..." with retry-after 0
 * ```
 */
export function isDevProxyRestart(res: Response, text: string): boolean {
  return (
    res.status === 503 &&
    res.headers.get("retry-after") === "0" &&
    res.headers.get("retry-after-ms") === null &&
    text.startsWith("Your worker restarted mid-request.")
  );
}

function validHint(res: Response): boolean {
  const seconds = res.headers.get("retry-after");
  const ms = res.headers.get("retry-after-ms");
  return seconds !== null && /^\d+$/.test(seconds) && ms !== null && /^\d+$/.test(ms) && Number(ms) > 0;
}

/**
 * Overloads a deployment through `wrangler dev` (the real Worker and Durable Object) in front of engine servers
 * on 127.0.0.1, then idles, then checks that nothing was lost or leaked. Bounded by `durationS` and
 * `maxRequests`; stops everything it started.
 *
 * @example
 * ```ts
 * const report = await runSoak({ port: 8799, replicas: 3, maxOngoingRequests: 4, maxQueuedRequests: 32,
 *   maxTokens: 32, engineSpeed: 1, overload: 20, durationS: 60, idleS: 10, maxRequests: 50_000 });
 * ```
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => {});
  // Engines run as their own processes: the load generator's event loop must not share them.
  const engines: Array<{ url: string; process: ManagedProcess }> = [];
  let worker: ManagedProcess | undefined;
  const persistTo = mkdtempSync(join(tmpdir(), "spillway-soak-"));
  try {
    for (let i = 0; i < options.replicas; i++)
      engines.push(await startEngineProcess(`soak-engine-${i}`, options.engineSpeed));
    const config = {
      logRejections: false,
      deployments: {
        [DEPLOYMENT]: {
          replicas: engines.map((e) => e.url),
          maxOngoingRequests: options.maxOngoingRequests,
          maxQueuedRequests: options.maxQueuedRequests,
          backpressure: { retryAfterS: 2 },
          ...(options.booking ? { booking: options.booking } : {}),
        },
      },
    };
    const wranglerOptions = {
      vars: {
        SPILLWAY_CONFIG: JSON.stringify(config),
        SPILLWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        SPILLWAY_SIGNING_SECRET: SIGNING_SECRET,
      },
      persistTo,
      quiet: !options.verbose,
    };
    let base: string;
    if (options.port) {
      worker = startWranglerDev({ ...wranglerOptions, port: options.port });
      base = `http://127.0.0.1:${options.port}`;
      await waitForWorker(worker, `${base}/health`);
    } else {
      const started = await startWorkerOnFreePort(wranglerOptions);
      worker = started.worker;
      base = started.base;
    }
    // Every request its own prompt, so its own fingerprint, as real traffic has: the router keeps per-request state
    // (the default policy's bookings, refusal counts, hinted retries) for each refusal, and must bound and drop it.
    let numbered = 0;
    const timeoutMs = 1000 * (options.requestTimeoutS ?? 120);
    const send = () =>
      fetch(`${base}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "demo-model",
          prompt: options.sameBody ? "soak" : `soak ${numbered++}`,
          max_tokens: options.maxTokens,
          ignore_eos: true,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });

    // Capacity: a closed loop of exactly the fleet's slots, for a few seconds.
    const slots = options.replicas * options.maxOngoingRequests;
    let calibrated = 0;
    const statuses = new Set<number>();
    const calibrateUntil = performance.now() + 3_000;
    await Promise.all(
      Array.from({ length: slots }, async () => {
        while (performance.now() < calibrateUntil) {
          const res = await send().catch((error: unknown) => {
            throw new Error(`calibration: a request got no answer (${String(error)})`);
          });
          await res.arrayBuffer();
          if (res.status === 200) calibrated += 1;
          else statuses.add(res.status);
        }
      }),
    );
    const capacity = calibrated / 3;
    if (capacity === 0) throw new Error(`calibration served nothing (statuses ${[...statuses].join(", ")})`);
    const offered = capacity * options.overload;
    log(`capacity ${capacity.toFixed(1)} req/s; offering ${offered.toFixed(0)} req/s for ${options.durationS} s`);
    await new Promise((r) => setTimeout(r, 1_000));
    const workerMemory = () => residentKiBOfGroup((worker as ManagedProcess).child.pid as number);
    const engineMemory = () => engines.reduce((sum, e) => sum + residentKiBOfGroup(e.process.child.pid as number), 0);
    const workerBefore = workerMemory();
    const enginesBefore = engineMemory();

    const report: SoakReport = {
      capacityReqPerS: capacity,
      offeredReqPerS: offered,
      achievedReqPerS: 0,
      sent: 0,
      served: 0,
      refused: 0,
      refusedWithoutValidHint: 0,
      devProxyRestarts: 0,
      otherStatus: {},
      lost: 0,
      rejectionLatencyMs: { p50: 0, p99: 0 },
      servedLatencyMs: { p50: 0, p99: 0 },
      after: { queueDepth: 0, activeLeases: 0, routerWaiters: 0, engineRunning: 0, engineWaiting: 0 },
      routerInternal: undefined,
      memoryKiB: {
        workerBefore,
        workerPeak: workerBefore,
        workerAfter: 0,
        enginesBefore,
        enginesPeak: enginesBefore,
        enginesAfter: 0,
      },
    };
    const rejectionLatencies: number[] = [];
    const servedLatencies: number[] = [];
    const inflight: Promise<void>[] = [];
    const one = async () => {
      const t0 = performance.now();
      try {
        const res = await send();
        const text = await res.text();
        const ms = performance.now() - t0;
        if (res.status === 200) {
          report.served += 1;
          servedLatencies.push(ms);
        } else if (isDevProxyRestart(res, text)) {
          report.devProxyRestarts += 1;
        } else if (res.status === 429 || res.status === 503) {
          report.refused += 1;
          rejectionLatencies.push(ms);
          if (!validHint(res)) {
            report.refusedWithoutValidHint += 1;
            report.invalidHintExample ??= `${res.status} ${JSON.stringify([...res.headers])} ${text.slice(0, 300)}`;
          }
        } else {
          report.otherStatus[res.status] = (report.otherStatus[res.status] ?? 0) + 1;
        }
      } catch (error) {
        report.lost += 1;
        report.lostExample ??= `${(performance.now() - t0).toFixed(0)} ms after sending: ${String(error)}`;
      }
    };
    // Open loop at the offered rate, in 10 ms ticks, bounded by duration and request count.
    const started = performance.now();
    const end = started + options.durationS * 1000;
    let due = 0;
    let lastMemory = started;
    while (performance.now() < end && report.sent < options.maxRequests) {
      due += (offered * 10) / 1000;
      while (due >= 1 && report.sent < options.maxRequests) {
        due -= 1;
        report.sent += 1;
        inflight.push(one());
      }
      if (performance.now() - lastMemory > 2_000) {
        lastMemory = performance.now();
        report.memoryKiB.workerPeak = Math.max(report.memoryKiB.workerPeak, workerMemory());
        report.memoryKiB.enginesPeak = Math.max(report.memoryKiB.enginesPeak, engineMemory());
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    report.achievedReqPerS = report.sent / ((performance.now() - started) / 1000);
    log(`sent ${report.sent} (${report.achievedReqPerS.toFixed(0)} req/s); waiting for every response`);
    await Promise.all(inflight);
    log(`idle for ${options.idleS} s`);
    await new Promise((r) => setTimeout(r, options.idleS * 1000));

    const stats = (await routerStats(base, ADMIN_TOKEN))[0] as ShardStats;
    const loads = await Promise.all(
      engines.map(async (e) => (await (await fetch(`${e.url}/load`)).json()) as LoadReport),
    );
    report.after = {
      queueDepth: stats.queueDepth,
      activeLeases: stats.activeLeases,
      routerWaiters: stats.internal.waiters,
      engineRunning: loads.reduce((sum, l) => sum + l.running, 0),
      engineWaiting: loads.reduce((sum, l) => sum + l.waiting, 0),
    };
    report.routerInternal = stats.internal;
    report.rejectionLatencyMs = { p50: percentile(rejectionLatencies, 50), p99: percentile(rejectionLatencies, 99) };
    report.servedLatencyMs = { p50: percentile(servedLatencies, 50), p99: percentile(servedLatencies, 99) };
    report.memoryKiB.workerAfter = workerMemory();
    report.memoryKiB.enginesAfter = engineMemory();
    return report;
  } finally {
    await worker?.stop();
    await Promise.all(engines.map((e) => e.process.stop()));
    rmSync(persistTo, { recursive: true, force: true });
  }
}
