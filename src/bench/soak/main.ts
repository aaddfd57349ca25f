/**
 * `npm run soak`: 20x a deployment's capacity for 60 s through `wrangler dev` to three engine servers on
 * 127.0.0.1, then 10 s idle; prints the report as JSON (see docs/reliability.md). Flags: --duration-s,
 * --overload, --idle-s, --port, --max-requests, --same-body (every request the same prompt, one fingerprint, as
 * before 2026-12-05; by default each request has its own), --booking '<JSON>' (the deployment's `booking` settings,
 * e.g. '{"standingTimeoutS":5}'; checked by the Worker's configuration schema).
 */
import { parseArgs } from "node:util";
import { runSoak } from "./run-soak";

const { values } = parseArgs({
  options: {
    "duration-s": { type: "string", default: "60" },
    overload: { type: "string", default: "20" },
    "idle-s": { type: "string", default: "10" },
    port: { type: "string", default: "0" },
    "max-requests": { type: "string", default: "60000" },
    verbose: { type: "boolean", default: false },
    "same-body": { type: "boolean", default: false },
    booking: { type: "string" },
  },
});

const report = await runSoak({
  port: Number(values.port),
  replicas: 3,
  maxOngoingRequests: 4,
  maxQueuedRequests: 32,
  maxTokens: 32,
  engineSpeed: 1,
  overload: Number(values.overload),
  durationS: Number(values["duration-s"]),
  idleS: Number(values["idle-s"]),
  maxRequests: Number(values["max-requests"]),
  log: (line) => console.error(`[soak] ${line}`),
  verbose: values.verbose,
  sameBody: values["same-body"],
  ...(values.booking ? { booking: JSON.parse(values.booking) as Record<string, unknown> } : {}),
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
