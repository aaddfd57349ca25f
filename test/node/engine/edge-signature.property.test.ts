import { type AddressInfo, createServer } from "node:net";
import { serve } from "@hono/node-server";
import fc from "fast-check";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGNATURE_HEADERS, signRequest } from "../../../src/core/request-signature";
import { signedGet } from "../../../src/edge/signed-get";
import { type EdgeSignatureOptions, requireEdgeSignature } from "../../../src/engine/edge-signature";
import { createLogger } from "../../../src/engine/log-line";
import { propertyRuns } from "../../support/property-runs";

/**
 * The engine's guard (`requireEdgeSignature`) through its HTTP interface, against a model of its contract
 * (src/engine/edge-signature.ts, README "engine server"): `/health`, `/v1/models` and `/v1/models/{id}` are open; `/load` and
 * `/metrics` are open unless `protectLoadAndMetrics`, and then need a valid signature made for any deployment;
 * everything else needs a valid, fresh, never-seen signature over its method, path with query and body, made (with
 * `deployments` set) for one of the engine's deployments. A refusal is 401 with one warning line naming the reason
 * (`missing`, `malformed`, `expired`, `replayed`, `invalid`, `deployment`); a valid signature made for another
 * deployment still uses up its nonce. Sequences of requests run against one guard with a clock that moves forward,
 * mixing fresh signatures, replays, tampering, other secrets and deployments, and clocks at the window's edges.
 *
 * The edge's side: `signedGet` signs what the engine verifies, the path and its query, for any probe URL.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(60, 20261217);
const WINDOW = 30_000;
const T0 = 1_750_000_000_000;
const SECRETS = ["current", "previous"] as const;

const INFERENCE = ["/v1/completions", "/v1/chat/completions"] as const;
const PROBES = ["/load", "/metrics"] as const;
const OPEN = ["/health", "/v1/models", "/v1/models/demo-model"] as const;
type Path = (typeof INFERENCE)[number] | (typeof PROBES)[number] | (typeof OPEN)[number];

interface Setup {
  protectLoadAndMetrics: boolean;
  deployments: string[] | undefined;
}

/** The guard in front of one route per path; the clock and the log are the test's. */
function guardedApp(setup: Setup) {
  const lines: string[] = [];
  let clock = T0;
  const options: EdgeSignatureOptions = {
    secrets: SECRETS,
    windowMs: WINDOW,
    protectLoadAndMetrics: setup.protectLoadAndMetrics,
    logger: createLogger("debug", (line) => lines.push(line)),
    now: () => clock,
  };
  if (setup.deployments !== undefined) options.deployments = setup.deployments;
  const app = new Hono();
  app.use(requireEdgeSignature(options));
  for (const path of INFERENCE) app.post(path, async (c) => c.json({ served: path, body: await c.req.text() }));
  for (const path of [...PROBES, ...OPEN]) app.get(path, (c) => c.json({ served: path }));
  return {
    app,
    lines,
    advance: (ms: number) => {
      clock += ms;
    },
    now: () => clock,
  };
}

/** What one step sends: which request, signed how, after how long. */
type Signing =
  | { kind: "none" }
  | { kind: "fresh"; secret: 0 | 1 | "other"; deployment: string; skewMs: number }
  | { kind: "tampered"; what: "body" | "path" | "method" | "mac" }
  | { kind: "garbage"; signature: string }
  | { kind: "replay"; of: number };

interface Step {
  path: Path;
  query: string;
  body: string;
  signing: Signing;
  afterMs: number;
}

const DEPLOYMENTS = ["llama", "mistral", "", "q/wen 2"] as const;
const deployment = fc.constantFrom(...DEPLOYMENTS);

const signing: fc.Arbitrary<Signing> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: "none" } as const) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("fresh" as const),
      secret: fc.constantFrom(0 as const, 1 as const, "other" as const),
      deployment,
      skewMs: fc.oneof(
        { weight: 4, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.constantFrom(-WINDOW - 1, -WINDOW, WINDOW, WINDOW + 1) },
        { weight: 1, arbitrary: fc.integer({ min: -3 * WINDOW, max: 3 * WINDOW }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("tampered" as const),
      what: fc.constantFrom("body" as const, "path" as const, "method" as const, "mac" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      signature: fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
        fc.string({ unit: fc.constantFrom("A", "=", "+", "/", "%", ".", "~"), minLength: 1, maxLength: 60 }),
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("replay" as const), of: fc.nat() }) },
);

const step: fc.Arbitrary<Step> = fc.record({
  path: fc.constantFrom<Path>(...INFERENCE, ...INFERENCE, ...PROBES, ...OPEN),
  query: fc.constantFrom("", "", "?a=1", "?x=%20y&z"),
  body: fc.constantFrom('{"model":"m","prompt":"hi"}', "{}", ""),
  signing,
  afterMs: fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: 2_000 }) },
    { weight: 1, arbitrary: fc.constantFrom(WINDOW, 2 * WINDOW, 2 * WINDOW + 1) },
  ),
});

const setup: fc.Arbitrary<Setup> = fc.record({
  protectLoadAndMetrics: fc.boolean(),
  deployments: fc.option(fc.uniqueArray(deployment, { minLength: 0, maxLength: 2 }), { nil: undefined }),
});

/** A request as sent: method, path with query, body and headers; `signedAtMs` and `nonce` when signed. */
interface Sent {
  method: string;
  target: string;
  body: string;
  headers: Record<string, string>;
  signedAtMs?: number;
  nonce?: string;
  deployment?: string;
  validSignature: boolean;
}

type Outcome = { status: 200 } | { status: 401; reason: string };

describe("requireEdgeSignature (property): sequences of requests against one guard", () => {
  it("serves and refuses exactly as the model says, and logs each refusal's reason", async () => {
    await fc.assert(
      fc.asyncProperty(setup, fc.array(step, { minLength: 1, maxLength: 12 }), async (s, steps) => {
        const { app, lines, advance, now } = guardedApp(s);
        const sent: Sent[] = [];
        /** Nonces a valid signature already used. */
        const used = new Set<string>();
        const served = s.deployments && s.deployments.length > 0 ? new Set(s.deployments) : undefined;

        for (const st of steps) {
          advance(st.afterMs);
          const method = (INFERENCE as readonly string[]).includes(st.path) ? "POST" : "GET";
          let request: Sent = {
            method,
            target: st.path + st.query,
            body: method === "POST" ? st.body : "",
            headers: {},
            validSignature: false,
          };
          const sign = async (secret: string, dep: string, atMs: number, over: Partial<Sent> = {}) => {
            const nonce = crypto.randomUUID();
            const r = { ...request, ...over };
            const headers = await signRequest(secret, {
              method: r.method,
              path: r.target,
              body: r.body,
              deployment: dep,
              timestampMs: atMs,
              nonce,
            });
            return { headers, nonce };
          };
          const g = st.signing;
          if (g.kind === "fresh") {
            const secret = g.secret === "other" ? "guess" : SECRETS[g.secret];
            const { headers, nonce } = await sign(secret, g.deployment, now() + g.skewMs);
            request = {
              ...request,
              headers,
              nonce,
              deployment: g.deployment,
              signedAtMs: now() + g.skewMs,
              validSignature: g.secret !== "other",
            };
          } else if (g.kind === "tampered") {
            const { headers } = await sign(SECRETS[0], "llama", now());
            // A GET sends no body: its query is what changes.
            if (g.what === "body" && method === "GET") {
              const target = `${request.target}${request.target.includes("?") ? "&" : "?"}t`;
              request = { ...request, headers, target };
            } else if (g.what === "body") request = { ...request, headers, body: `${request.body} ` };
            else if (g.what === "path") request = { ...request, headers, target: `${request.target}/` };
            else if (g.what === "mac") {
              const mac = headers[SIGNATURE_HEADERS.signature] as string;
              const flipped = (mac[0] === "A" ? "B" : "A") + mac.slice(1);
              request = { ...request, headers: { ...headers, [SIGNATURE_HEADERS.signature]: flipped } };
            } else {
              // Signed as another method than the one sent: only the inference routes take a body.
              const { headers: other } = await sign(SECRETS[0], "llama", now(), {
                method: method === "POST" ? "PUT" : "POST",
              });
              request = { ...request, headers: other };
            }
          } else if (g.kind === "garbage") {
            const { headers } = await sign(SECRETS[0], "llama", now());
            request = { ...request, headers: { ...headers, [SIGNATURE_HEADERS.signature]: g.signature } };
          } else if (g.kind === "replay") {
            const earlier = sent.filter((r) => r.validSignature);
            if (earlier.length > 0) request = { ...(earlier[g.of % earlier.length] as Sent) };
          }

          // A replay or a tampered path sends another path than the step drew.
          const pathname = new URL(`http://engine${request.target}`).pathname;
          const want = expected(request, pathname, s, served, used, now());
          const before = lines.length;
          const res = await app.request(`http://engine${request.target}`, {
            method: request.method,
            headers: { "content-type": "application/json", ...request.headers },
            ...(request.method === "POST" ? { body: request.body } : {}),
          });
          const why = `step ${JSON.stringify(st)} sent ${JSON.stringify(request)}`;
          expect(res.status, why).toBe(want.status);
          const logged = lines.slice(before);
          if (want.status === 401) {
            expect(logged, why).toHaveLength(1);
            expect(logged[0], why).toContain(`edge signature ${want.reason}`);
            expect(await res.text(), why).not.toContain(want.reason); // the client learns nothing
          } else {
            expect(logged, why).toHaveLength(0);
            const answer = (await res.json()) as { served: string; body?: string };
            expect(answer.served, why).toBe(pathname);
            // The handler reads the body the guard read.
            if (request.method === "POST") expect(answer.body, why).toBe(request.body);
          }
          sent.push(request);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

/** The model: what the guard must answer to `r` at `nowMs`, and the nonces it uses up. */
function expected(
  r: Sent,
  path: string,
  s: Setup,
  served: Set<string> | undefined,
  used: Set<string>,
  nowMs: number,
): Outcome {
  if ((OPEN as readonly string[]).includes(path)) return { status: 200 };
  const probe = (PROBES as readonly string[]).includes(path);
  if (probe && !s.protectLoadAndMetrics) return { status: 200 };
  const signature = r.headers[SIGNATURE_HEADERS.signature];
  if (signature === undefined) return { status: 401, reason: "missing" };
  const mac = signature;
  if (!/^[A-Za-z0-9_-]+$/.test(mac) || mac.length % 4 === 1) return { status: 401, reason: "malformed" };
  const timestamp = Number(r.headers[SIGNATURE_HEADERS.timestamp]);
  if (Math.abs(nowMs - timestamp) > WINDOW) return { status: 401, reason: "expired" };
  if (!r.validSignature) return { status: 401, reason: "invalid" };
  const nonce = r.nonce as string;
  if (used.has(nonce)) return { status: 401, reason: "replayed" };
  used.add(nonce); // a valid signature takes its nonce, even when its deployment is then refused
  if (served && !probe && !served.has(r.deployment as string)) return { status: 401, reason: "deployment" };
  return { status: 200 };
}

// ---------------------------------------------------------------------------------------------------------------
// The edge's signed GET against a real engine-side guard.

describe("signedGet (property): signs what the engine verifies", () => {
  const seen: string[] = [];
  let url = "";
  let close: () => void = () => {};

  beforeAll(async () => {
    const app = new Hono();
    app.use(
      requireEdgeSignature({
        secrets: ["k"],
        windowMs: WINDOW,
        protectLoadAndMetrics: true,
        deployments: ["llama"],
        logger: createLogger("debug", (line) => seen.push(line)),
      }),
    );
    app.get("/load", (c) => c.json({ queueLength: 0, url: new URL(c.req.url).search }));
    app.get("/metrics", (c) => c.text("# ok\n"));
    // A free port, then the server on it.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port });
    url = `http://127.0.0.1:${port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  const queryText = fc.string({
    unit: fc.constantFrom("a", "1", "=", "&", "%20", " ", "é", "/", "?", "~", "+", "%", "'", '"', "<", "[", "]"),
    maxLength: 10,
  });

  it("is accepted on /load and /metrics with any query (the engine serves only this engine's deployment)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/load", "/metrics"), fc.option(queryText, { nil: undefined }), async (p, q) => {
        const target = q === undefined ? `${url}${p}` : `${url}${p}?${q}`;
        const before = seen.length;
        const res = await signedGet(target, "k", AbortSignal.timeout(5_000));
        expect(res.status, `${target}: ${seen.slice(before).join("\n")}`).toBe(200);
        await res.body?.cancel();
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Unsigned, it is refused (the guard is on), so the 200s above are the signature's.
    expect((await fetch(`${url}/load`)).status).toBe(401);
  });
});
