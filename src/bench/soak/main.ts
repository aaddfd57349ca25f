/**
 * `npm run soak`: 20x a deployment's capacity for 60 s through `wrangler dev` to three engine servers on
 * 127.0.0.1, then 10 s idle; prints the report as JSON (see docs/reliability.md). Flags: --duration-s,
 * --overload, --idle-s, --port, --max-requests, --same-body (every request the same prompt, one fingerprint, as
 * before 2026-12-05; by default each request has its own), --booking '<JSON>' (the deployment's `booking` settings,
 * e.g. '{"standingTimeoutS":5}'; checked by the Worker's configuration schema).
 */
import { commandFlags, numberFlag, positiveIntFlag, UsageError } from "../command-line";
import { runSoak } from "./run-soak";

/** `--booking`'s JSON (its keys are the Worker configuration schema's to check). */
function bookingFlag(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new UsageError(`--booking must be JSON, e.g. '{"standingTimeoutS":5}', got ${text}`, 2);
  }
}

const flags = commandFlags(
  "npm run soak -- [--duration-s S (default 60)] [--overload X (times the capacity, default 20)] [--idle-s S (default 10)] [--port N (wrangler dev's, default 0: any free one)] [--max-requests N (default 60000)] [--same-body] [--booking '<JSON>'] [--verbose]",
  {
    options: {
      "duration-s": { type: "string" },
      overload: { type: "string" },
      "idle-s": { type: "string" },
      port: { type: "string" },
      "max-requests": { type: "string" },
      verbose: { type: "boolean", default: false },
      "same-body": { type: "boolean", default: false },
      booking: { type: "string" },
    },
  },
  ({ values }) => ({
    port: numberFlag("port", values.port, 0, { min: 0, max: 65535, integer: true }),
    overload: numberFlag("overload", values.overload, 20, { above: 0 }),
    durationS: numberFlag("duration-s", values["duration-s"], 60, { above: 0 }),
    idleS: numberFlag("idle-s", values["idle-s"], 10, { min: 0 }),
    maxRequests: positiveIntFlag("max-requests", values["max-requests"], 60000),
    verbose: values.verbose,
    sameBody: values["same-body"],
    ...(values.booking ? { booking: bookingFlag(values.booking) } : {}),
  }),
);

const report = await runSoak({
  ...flags,
  replicas: 3,
  maxOngoingRequests: 4,
  maxQueuedRequests: 32,
  maxTokens: 32,
  engineSpeed: 1,
  log: (line) => console.error(`[soak] ${line}`),
});
console.log(JSON.stringify(report, null, 2));
const ok =
  report.lost === 0 &&
  report.refusedWithoutValidHint === 0 &&
  report.after.queueDepth === 0 &&
  report.after.activeLeases === 0 &&
  report.after.routerWaiters === 0 &&
  report.after.engineRunning + report.after.engineWaiting === 0;
// wrangler dev's proxy's own 503s are not spillway's answers: reported beside the verdict, not in it.
const proxy =
  report.devProxyRestarts > 0
    ? ` (and ${report.devProxyRestarts} answers of wrangler dev's proxy, "503 Your worker restarted mid-request": not spillway's, see docs/reliability.md)`
    : "";
console.error(ok ? `[soak] PASS: nothing lost, nothing leaked${proxy}` : `[soak] FAIL${proxy}`);
process.exit(ok ? 0 : 1);
