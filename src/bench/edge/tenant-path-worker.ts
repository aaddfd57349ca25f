/**
 * The Worker of `npm run bench:tenant-path`: runs one piece of a leased quota tenant's admitted path (the edge
 * code an anonymous request does not run) `n` times inside workerd, so the driver can time it from outside
 * (workerd's own clock stands still while JavaScript runs). `GET /?case=NAME&n=N`; the cases are listed in
 * {@link CASES}. Built against this tree, or against another checkout's `src/` (the driver's `--before`), so
 * the same loops time the old and the new code: it imports only functions both have, but for a module the other
 * checkout lacks, which comes from this tree (`WholeEvents`, which an older `withIdleDeadline` ignores).
 *
 * @example
 * ```ts
 * // bundled by src/bench/edge/tenant-path-bench.ts and run under miniflare; then:
 * await fetch(`${url}/?case=resolve&n=20000`);
 * ```
 */
import { QuotaLedger, type QuotaLimits, type QuotaUnits } from "../../core/tenant-quota";
import { relayBody } from "../../edge/forward";
import { withIdleDeadline } from "../../edge/idle-deadline";
import { tapEventStreamUsage, usageOfJson } from "../../edge/response-usage";
import { WholeEvents } from "../../edge/sse-framing";
import { type TenantPlan, tenantsSchema } from "../../edge/tenant-config";
import { chargeQuota } from "../../edge/tenant-quota-charge";
import type { TenantQuota } from "../../edge/tenant-quota-object";
import { resolveTenant } from "../../edge/tenant-resolver";
import { withTenantHeaders } from "../../edge/tenant-response";

/** `printf %s sk-bench | sha256sum`: the key of the edge benchmark's quota tenant. */
const BENCH_KEY_SHA256 = "c00397de4384b5bbaf14c02fe1ec7020d28d1eeab6a722c576c84b6678c41c29";

/** An engine server's whole answer to the edge benchmark's request (`max_tokens` 4), as it came back. */
const ANSWER = new TextEncoder().encode(
  '{"id":"cmpl-30cc07a161ff4c24a8c9b9d0df26f0ce","created":1796082068,"model":"demo-model","served_by":"engine-42519","object":"text_completion","choices":[{"index":0,"text":" men","logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}',
);

/** The edge benchmark's quota tenant: quotas far above what is sent, so it leases. */
const tenants = tenantsSchema.parse({
  keys: { [BENCH_KEY_SHA256]: { name: "bench", requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 } },
});
/**
 * A streamed answer as OpenAI-compatible servers send it: one `data:` event per token (here 200, each about the
 * size of a chat completion chunk), then the final usage chunk and `[DONE]`.
 */
const STREAM_CHUNKS = [
  ...Array.from({ length: 200 }, (_, i) =>
    new TextEncoder().encode(
      `data: {"id":"chatcmpl-30cc07a161ff4c24a8c9b9d0df26f0ce","object":"chat.completion.chunk","created":1796082068,"model":"demo-model","choices":[{"index":0,"delta":{"content":" tok${i}"},"finish_reason":null}]}\n\n`,
    ),
  ),
  new TextEncoder().encode(
    'data: {"id":"chatcmpl-30cc07a161ff4c24a8c9b9d0df26f0ce","object":"chat.completion.chunk","created":1796082068,"model":"demo-model","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":200,"total_tokens":201}}\n\ndata: [DONE]\n\n',
  ),
];

function streamedAnswer(): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = STREAM_CHUNKS[next++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

/** Reads a stream to its end (as the client does). */
async function drain(body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  while (!(await reader.read()).done) {}
}

const plan = tenants.keys[BENCH_KEY_SHA256] as TenantPlan;

/** The quota object's ledger without the Durable Object: only a lease renewal (about once a second) reaches it. */
const ledger = new QuotaLedger();
const namespace = {
  getByName: () => ({
    admit: async (limits: QuotaLimits, tokens: number, lease?: { want?: QuotaUnits }) =>
      ledger.admit(limits, tokens, Date.now(), lease?.want),
    adjust: async (limits: QuotaLimits, requests: number, tokens: number) =>
      ledger.adjust(limits, requests, tokens, Date.now()),
    returnLease: async () => {},
  }),
} as unknown as DurableObjectNamespace<TenantQuota>;

const ignore = () => {};

/** The streamed answer read as `forwardToReplica` reads a replica's stream (with `framer`, if any), and relayed. */
function readAndRelay(framer: WholeEvents | undefined): Promise<void> {
  const read = withIdleDeadline(undefined, streamedAnswer().getReader(), 300_000, ignore, undefined, framer);
  return drain(relayBody(read, ignore, undefined, true));
}

/** One admitted request's tenant work, piece by piece; `all` is every piece in the middleware's order. */
const CASES: Record<string, () => Promise<unknown> | unknown> = {
  empty: () => undefined,
  resolve: () => resolveTenant("Bearer sk-bench", tenants, undefined),
  charge: async () => {
    const outcome = await chargeQuota({ plan, tokens: 6, namespace, leaseMs: 1000, waitUntil: ignore });
    if (outcome.kind === "charged") outcome.charge.settle(3);
    return outcome;
  },
  headers: async () => {
    const outcome = await chargeQuota({ plan, tokens: 6, namespace, leaseMs: 1000, waitUntil: ignore });
    if (outcome.kind !== "charged") throw new Error("refused");
    outcome.charge.settle(3);
    return withTenantHeaders(new Response(ANSWER, { headers: { "content-type": "application/json" } }), {
      ...outcome.charge.headers,
    });
  },
  plainResponse: () => new Response(ANSWER, { headers: { "content-type": "application/json" } }),
  usage: () => usageOfJson(ANSWER),
  // One streamed answer of 201 chunks: read through the usage tap, and plainly (the stream's own cost).
  streamTapped: async () => {
    let total: number | undefined;
    await drain(tapEventStreamUsage(streamedAnswer(), (tokens) => (total = tokens)));
    if (total !== 201) throw new Error(`usage ${total}`);
  },
  streamPlain: () => drain(streamedAnswer().pipeThrough(new TransformStream<Uint8Array, Uint8Array>())),
  // The same answer as the Worker relays a replica's stream (every streamed answer, tenant or not): read under the
  // idle deadline, then relayed; and the same with the read cutting it into whole events (`WholeEvents`).
  streamRead: () => readAndRelay(undefined),
  streamReadFramed: () => readAndRelay(new WholeEvents()),
  all: async () => {
    const who = await resolveTenant("Bearer sk-bench", tenants, undefined);
    if (who.kind !== "tenant") throw new Error("unknown key");
    const outcome = await chargeQuota({ plan: who.plan, tokens: 6, namespace, leaseMs: 1000, waitUntil: ignore });
    if (outcome.kind !== "charged") throw new Error("refused");
    const response = new Response(ANSWER, { headers: { "content-type": "application/json" } });
    outcome.charge.settle(usageOfJson(ANSWER));
    return withTenantHeaders(response, outcome.charge.headers);
  },
};

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const run = CASES[url.searchParams.get("case") ?? ""];
    if (!run) return new Response(`cases: ${Object.keys(CASES).join(", ")}`, { status: 404 });
    const n = Number(url.searchParams.get("n") ?? "1000");
    // A stream is a few hundred chunks: the driver sends fewer of them (its `--n` divided by STREAM_SCALE).
    for (let i = 0; i < n; i++) await run();
    return new Response("ok");
  },
};
