/**
 * One client process of `npm run eval:e2e` (forked by eval/e2e-openai.ts with `node --import tsx`; not run by
 * hand). For each run order it receives over IPC, it sends its share of the arrivals at their scheduled instants,
 * each request with its own `OpenAI` instance (its own API key, so its own fingerprint; the SDK's own retries and
 * `x-stainless-*` headers) through the delaying proxy, and reports every request's outcome back. At the run's
 * cut-off, requests still running are aborted and reported unfinished. It exits when the load generator
 * disconnects (including when that process dies), so it never outlives it.
 */

import { setMaxListeners } from "node:events";
import OpenAI from "openai";
import type { E2eOutcome } from "./e2e-outcomes";
import { type E2eClientReport, type E2eRunOrder, sharedNowMs } from "./e2e-protocol";

const send = (report: E2eClientReport) => process.send?.(report);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!process.send) {
  console.error("eval/e2e-client.ts is a child process of eval/e2e-openai.ts (it needs an IPC channel)");
  process.exit(2);
}
process.on("disconnect", () => process.exit(0));

async function run(order: E2eRunOrder): Promise<void> {
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one listener per request in flight: hundreds during a burst, by design
  const cutAt = order.startAtMs + order.maxRunS * 1000;
  const requests: Promise<void>[] = [];
  const reported = new Set<string>();
  let cutOff = false;
  const keyOf = (index: number) => `${order.keyPrefix}${index}`;
  const report = (outcome: E2eOutcome, sendLagMs: number) => {
    if (cutOff || reported.has(outcome.key)) return; // after the cut, an aborted request is already reported
    reported.add(outcome.key);
    send({ type: "outcome", runId: order.runId, outcome, sendLagMs });
  };
  const sending = (async () => {
    for (const arrival of order.arrivals) {
      const due = order.startAtMs + arrival.atS * 1000;
      const wait = due - sharedNowMs();
      if (wait > 0) await sleep(wait);
      if (cutOff) return;
      const key = keyOf(arrival.index);
      const client = new OpenAI({
        baseURL: order.baseURL,
        apiKey: `sk-e2e-${key}`,
        maxRetries: order.maxRetries,
        timeout: order.maxRunS * 1000,
        defaultHeaders: { "x-e2e-id": key, ...(arrival.headerless ? { "x-e2e-headerless": "1" } : {}) },
      });
      const sent = performance.now();
      const sendLagMs = sharedNowMs() - due;
      const base = { key, headerless: arrival.headerless, unfinished: false };
      requests.push(
        client.completions
          // ignore_eos: every answer is outputTokens long, as in the capacity measurement (an engine extension).
          .create(
            { model: order.model, prompt: `request ${key}`, max_tokens: order.outputTokens, ignore_eos: true } as never,
            { signal: abort.signal },
          )
          .then(
            () => report({ ...base, ok: true, latencyS: (performance.now() - sent) / 1000 }, sendLagMs),
            () => report({ ...base, ok: false, latencyS: 0 }, sendLagMs),
          ),
      );
    }
  })();
  const finished = sending.then(() => Promise.all(requests)).then(() => "finished" as const);
  let cutTimer: NodeJS.Timeout | undefined;
  const cut = new Promise<"cut">((done) => {
    cutTimer = setTimeout(() => done("cut"), Math.max(0, cutAt - sharedNowMs()));
  });
  const ending = await Promise.race([finished, cut]);
  clearTimeout(cutTimer);
  if (ending === "cut") {
    // Requests still running at the cut, and any the schedule never reached, count as not served.
    for (const arrival of order.arrivals) {
      const key = keyOf(arrival.index);
      report({ key, ok: false, latencyS: 0, headerless: arrival.headerless, unfinished: true }, 0);
    }
    cutOff = true;
    abort.abort();
  }
  send({ type: "done", runId: order.runId });
}

let queue = Promise.resolve();
process.on("message", (message: E2eRunOrder) => {
  if (message?.type !== "run") return;
  // Orders run one after another (the load generator sends the next only after "done" anyway).
  // A failure here exits the process, so the load generator fails at once instead of waiting for "done".
  queue = queue
    .then(() => run(message))
    .catch((error: unknown) => {
      console.error("e2e client process:", error);
      process.exit(1);
    });
});
send({ type: "ready" });
