/**
 * The delaying proxy of `npm run eval:e2e`, in a process of its own (forked by eval/e2e-openai.ts with
 * `node --import tsx`; not run by hand): every attempt waits 50-300 ms (seeded; half before it is forwarded to
 * the Worker, half before its answer goes back), and the `x-stainless-*` headers of requests marked
 * `x-e2e-headerless: 1` are stripped, so the Worker sees clients without the SDK's retry header. It counts
 * attempts per request id (`x-e2e-id`, the same on every retry of a request), with the status each was answered
 * with, and answers the load generator's `attempts` queries over IPC. Arguments: the Worker's base URL, the delay
 * seed. It exits when the load generator disconnects.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { seededRandom } from "../src/engine/rng";
import type { E2eAttemptCounts, E2eAttemptsQuery, E2eProxyReport } from "./e2e-protocol";

const [workerBase, seedArg] = process.argv.slice(2);
if (!process.send || !workerBase) {
  console.error("eval/e2e-proxy.ts is a child process of eval/e2e-openai.ts: e2e-proxy.ts <worker base URL> [seed]");
  process.exit(2);
}
const send = (report: E2eProxyReport) => process.send?.(report);
process.on("disconnect", () => process.exit(0));

/** The status returned to each attempt, per request id (`"failed"`: no answer from the Worker; `"pending"`: not yet). */
const attempts = new Map<string, string[]>();
const delays = seededRandom(Number(seedArg ?? 77));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const proxy = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const delayMs = 50 + delays() * 250;
  const body = await readBody(req);
  await sleep(delayMs / 2);
  const id = String(req.headers["x-e2e-id"] ?? "");
  // Counted as it arrives (an attempt cut off at the run's end still counts); its status is filled in on answer.
  const statuses = attempts.get(id) ?? [];
  attempts.set(id, statuses);
  const index = statuses.push("pending") - 1;
  const headerless = req.headers["x-e2e-headerless"] === "1";
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === "host" || k === "content-length" || k.startsWith("x-e2e-")) continue;
    if (headerless && k.startsWith("x-stainless-")) continue;
    headers[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  try {
    const upstream = await fetch(`${workerBase}${req.url}`, { method: req.method, headers, body });
    const answer = Buffer.from(await upstream.arrayBuffer());
    await sleep(delayMs / 2);
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (k !== "content-length" && k !== "content-encoding" && k !== "transfer-encoding") out[k] = v;
    });
    statuses[index] = String(upstream.status);
    res.writeHead(upstream.status, out);
    res.end(answer);
  } catch {
    // The Worker is gone or the client aborted (a run's cut-off): nothing to answer meaningfully.
    statuses[index] = "failed";
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});

process.on("message", (message: E2eAttemptsQuery) => {
  if (message?.type !== "attempts") return;
  const counts: E2eAttemptCounts = { total: 0, byStatus: {}, requestsByAttempts: {} };
  for (const [id, statuses] of attempts)
    if (id.startsWith(message.prefix)) {
      counts.total += statuses.length;
      for (const s of statuses) counts.byStatus[s] = (counts.byStatus[s] ?? 0) + 1;
      const n = String(statuses.length);
      counts.requestsByAttempts[n] = (counts.requestsByAttempts[n] ?? 0) + 1;
      attempts.delete(id);
    }
  send({ type: "attempts", prefix: message.prefix, ...counts });
});

proxy.listen(0, "127.0.0.1", () => send({ type: "ready", port: (proxy.address() as AddressInfo).port }));
