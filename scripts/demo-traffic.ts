/**
 * The demo's traffic generator: open-loop arrivals (each request is sent on schedule, whatever happened to the
 * previous ones) whose rate ramps from well under the demo fleet's capacity to about twice it and back, so
 * the dashboard shows requests admitted, queued and shed with a computed Retry-After. Shed requests are not
 * retried: the point is to watch the edge refuse load, not to pile it up.
 *
 * `npm run demo:traffic` (against a running `npm start`), or `npm start -- --traffic`. Flags: `--base-url`
 * (http://127.0.0.1:8787), `--model` (demo-model), `--cycles` (0 = until Ctrl-C), `--time-scale` (1; 0.2 runs a
 * cycle five times faster), `--keys sk-demo-alpha,sk-demo-beta` (API keys the requests take in turn: two tenants;
 * default none, the anonymous tenant).
 */
import { seededRandom } from "../src/engine/rng";
import { commandFlags, numberFlag } from "./command-line";

/** One stretch of the load profile: the arrival rate moves linearly from `fromRps` to `toRps`. */
export interface TrafficPhase {
  seconds: number;
  fromRps: number;
  toRps: number;
}

/** The default cycle (about 70 s): warm up, ramp past capacity (~25 req/s for the demo fleet), hold, recover. */
export const DEMO_PHASES: TrafficPhase[] = [
  { seconds: 10, fromRps: 4, toRps: 10 },
  { seconds: 20, fromRps: 10, toRps: 60 },
  { seconds: 15, fromRps: 60, toRps: 60 },
  { seconds: 15, fromRps: 60, toRps: 4 },
  { seconds: 10, fromRps: 4, toRps: 4 },
];

/** Counts since the last report. */
export interface TrafficTick {
  elapsedS: number;
  rps: number;
  sent: number;
  ok: number;
  shed: number;
  failed: number;
  /** Retry-After values (seconds) of the shed requests. */
  retryAfterS: number[];
}

export interface TrafficOptions {
  baseUrl: string;
  model?: string;
  phases?: TrafficPhase[];
  /** Repeat the phases this many times; 0 = until `signal` aborts. */
  cycles?: number;
  /** Multiplies every phase's duration (0.2 = five times faster). */
  timeScale?: number;
  /** Output tokens per request (ignore_eos, so every request costs the same). */
  maxTokens?: number;
  signal?: AbortSignal;
  /** Called about every `tickS` seconds with the counts since the last call. */
  onTick?: (tick: TrafficTick) => void;
  tickS?: number;
  /** Seeded for a repeatable schedule. */
  seed?: number;
  /** API keys sent as `Authorization: Bearer`, one per request in turn (several tenants); none: anonymous. */
  apiKeys?: string[];
}

/**
 * The arrival rate at `t` seconds into the profile (0 past its end).
 *
 * @example
 * ```ts
 * rateAt([{ seconds: 10, fromRps: 0, toRps: 10 }], 5); // 5
 * ```
 */
export function rateAt(phases: TrafficPhase[], t: number): number {
  let start = 0;
  for (const p of phases) {
    if (t < start + p.seconds) return p.fromRps + ((p.toRps - p.fromRps) * (t - start)) / p.seconds;
    start += p.seconds;
  }
  return 0;
}

/**
 * Sends Poisson arrivals following `phases` until the cycles are done or `signal` aborts; resolves once every
 * request it sent has ended.
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * await runTraffic({ baseUrl: "http://127.0.0.1:8787", cycles: 1, timeScale: 0.2, signal: stop.signal,
 *   onTick: (t) => console.log(t.ok, t.shed) });
 * ```
 */
export async function runTraffic(options: TrafficOptions): Promise<void> {
  const phases = (options.phases ?? DEMO_PHASES).map((p) => ({ ...p, seconds: p.seconds * (options.timeScale ?? 1) }));
  const cycleS = phases.reduce((s, p) => s + p.seconds, 0);
  const cycles = options.cycles ?? 0;
  const random = seededRandom(options.seed ?? 1);
  const tickS = options.tickS ?? 2;
  const url = `${options.baseUrl.replace(/\/+$/, "")}/v1/chat/completions`;
  const inFlight = new Set<Promise<void>>();
  let tick: TrafficTick = { elapsedS: 0, rps: 0, sent: 0, ok: 0, shed: 0, failed: 0, retryAfterS: [] };
  const started = performance.now();
  let lastTick = started;
  let n = 0;

  const send = async () => {
    const i = n++;
    const keys = options.apiKeys ?? [];
    const key = keys.length > 0 ? keys[i % keys.length] : undefined;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({
          model: options.model ?? "demo-model",
          messages: [{ role: "user", content: `demo request ${i}: tell me about load shedding` }],
          max_tokens: options.maxTokens ?? 48,
          ignore_eos: true,
        }),
        signal: options.signal,
      });
      await res.arrayBuffer();
      if (res.ok) tick.ok++;
      else if (res.status === 429 || res.status === 503) {
        tick.shed++;
        const ra = Number(res.headers.get("retry-after"));
        if (Number.isFinite(ra) && ra > 0) tick.retryAfterS.push(ra);
      } else tick.failed++;
    } catch {
      if (!options.signal?.aborted) tick.failed++;
    }
  };

  for (;;) {
    if (options.signal?.aborted) break;
    const elapsed = (performance.now() - started) / 1000;
    if (cycles > 0 && elapsed >= cycles * cycleS) break;
    const rps = rateAt(phases, elapsed % cycleS);
    // Exponential gap at the current rate (a Poisson process whose rate changes slowly).
    const gapS = rps > 0 ? -Math.log(1 - random()) / rps : 0.1;
    await new Promise((r) => setTimeout(r, Math.min(gapS, 1) * 1000));
    if (options.signal?.aborted) break;
    if (rps > 0) {
      const p = send().finally(() => inFlight.delete(p));
      inFlight.add(p);
      tick.sent++;
    }
    const now = performance.now();
    if ((now - lastTick) / 1000 >= tickS) {
      options.onTick?.({ ...tick, elapsedS: (now - started) / 1000, rps });
      tick = { elapsedS: 0, rps: 0, sent: 0, ok: 0, shed: 0, failed: 0, retryAfterS: [] };
      lastTick = now;
    }
  }
  await Promise.allSettled([...inFlight]);
}

/**
 * One line per tick for the console.
 *
 * @example
 * ```ts
 * formatTick(tick); // "traffic  t=  12s  rate 24.0/s  sent 48  ok 40  shed 8 (Retry-After 1-2 s)  failed 0"
 * ```
 */
export function formatTick(t: TrafficTick): string {
  const ra =
    t.retryAfterS.length > 0 ? ` (Retry-After ${Math.min(...t.retryAfterS)}-${Math.max(...t.retryAfterS)} s)` : "";
  return `traffic  t=${t.elapsedS.toFixed(0).padStart(4)}s  rate ${t.rps.toFixed(1).padStart(4)}/s  sent ${t.sent}  ok ${t.ok}  shed ${t.shed}${ra}  failed ${t.failed}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, cycles, timeScale } = commandFlags(
    "npm run demo:traffic -- [--base-url <url>] [--model <name>] [--cycles <n>] [--time-scale <x>] [--keys <key,...>]",
    {
      options: {
        "base-url": { type: "string", default: "http://127.0.0.1:8787" },
        model: { type: "string", default: "demo-model" },
        cycles: { type: "string", default: "0" },
        "time-scale": { type: "string", default: "1" },
        keys: { type: "string", default: "" },
      },
    },
    ({ values }) => ({
      values,
      // 0: until Ctrl-C. A time scale of 0 would make a cycle last no time at all.
      cycles: numberFlag("cycles", values.cycles, 0, { min: 0 }),
      timeScale: numberFlag("time-scale", values["time-scale"], 1, { above: 0 }),
    }),
  );
  const stop = new AbortController();
  process.on("SIGINT", () => stop.abort());
  process.on("SIGTERM", () => stop.abort());
  console.log(`traffic: ramping ${values["base-url"]} past capacity and back; Ctrl-C stops`);
  await runTraffic({
    baseUrl: values["base-url"],
    model: values.model,
    cycles,
    timeScale,
    apiKeys: values.keys.split(",").filter((k) => k.length > 0),
    signal: stop.signal,
    onTick: (t) => console.log(formatTick(t)),
  });
}
