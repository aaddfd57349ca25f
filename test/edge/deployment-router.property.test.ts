import { env } from "cloudflare:workers";
import fc from "fast-check";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import { requestFingerprint, shardForFingerprint } from "../../src/core/request-fingerprint";
import { spillway } from "../../src/edge/index";
import { routerName } from "../../src/edge/router-protocol";
import { propertyRuns } from "../support/property-runs";

/**
 * How requests map to router shards, and which calls a router (the DeploymentRouter Durable Object) answers. Held:
 *
 * - through the middleware, every attempt of the same request - whatever retry headers, SDK headers, user agent or
 *   idempotency key each attempt carries - asks the router named `routerName(deployment, shard)` for the shard its
 *   fingerprint picks (`shardForFingerprint` of the SHA-256 over credential, method, path and body), names that same
 *   deployment and shard in the call, and carries that fingerprint (README, `routerShards`: "every attempt of the
 *   same request to the same one");
 * - a router answers only the calls that name it: `stats(deployment, shard)` on the object `routerName(d, s)` is
 *   answered, with that identity, exactly when (deployment, shard) is (d, s) and s is one of d's shards; a call
 *   naming another deployment, another shard, a shard the deployment does not have, or no shard at all (negative,
 *   fractional, NaN, a string) is refused with an error that says which router was called as what, never served
 *   by the wrong queue;
 * - a malformed `acquire` (an option out of the tenant configuration's ranges, a ticket that is not one, a carried
 *   slot that is not one) is refused with an error naming the field, and leaves the router's counts as they were.
 */

const { seed: SEED, numRuns: RUNS } = propertyRuns(40, 20261206);

const SHARDED = "sharded";
const SHARDS = 4;

/** A Worker with the middleware whose router namespace records every lookup and call, and admits at once. */
function recordingEdge() {
  const calls: { name: string; deployment: string; shard: number; fingerprint: unknown }[] = [];
  const replica = `${inject("fakeEngineUrl")}/r/deployment-router-property`;
  const app = new Hono<{ Bindings: typeof env }>();
  app.post(
    "/v1/chat/completions",
    spillway({
      routers: () =>
        ({
          getByName: (name: string) => ({
            acquire: async (deployment: string, shard: number, _ticket: string, options: { fingerprint?: unknown }) => {
              calls.push({ name, deployment, shard, fingerprint: options.fingerprint });
              return { kind: "admitted", replica };
            },
            releaseAll: async () => ({}),
            cancel: async () => undefined,
          }),
        }) as never,
    }),
  );
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  return { app, ctx, calls };
}

/** Headers that differ from one attempt of a request to the next, and must not move it to another shard. */
const attemptHeaders = fc.record(
  {
    "x-stainless-retry-count": fc.constantFrom("0", "1", "2", "nonsense"),
    "x-stainless-lang": fc.constantFrom("js", "python", ""),
    "x-stainless-package-version": fc.constantFrom("6.1.0", "1.99.0"),
    "user-agent": fc.constantFrom("OpenAI/JS 6.1.0", "curl/8", "python-httpx/0.27"),
    "idempotency-key": fc.uuid(),
    "x-request-id": fc.string({ unit: fc.constantFrom(..."abc123-"), maxLength: 12 }),
  },
  { requiredKeys: [] },
);

describe("every attempt of a request goes to the shard its fingerprint picks", () => {
  it("names the fingerprint's router, and that deployment and shard in the call, on every attempt", async () => {
    const { app, ctx, calls } = recordingEdge();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom(..."abcdefgh xyz.,!é😀"), minLength: 1, maxLength: 40 }),
        fc.option(fc.string({ unit: fc.constantFrom(..."abcdefXYZ0123456789-_"), minLength: 8, maxLength: 24 }), {
          nil: undefined,
        }),
        fc.constantFrom("", "?api-version=2024-10-21", "?a=1&b=%2F"),
        fc.array(attemptHeaders, { minLength: 2, maxLength: 3 }),
        async (content, key, search, attempts) => {
          calls.length = 0;
          const body = JSON.stringify({ model: SHARDED, messages: [{ role: "user", content }] });
          const authorization = key === undefined ? undefined : `Bearer sk-${key}`;
          for (const headers of attempts) {
            const res = await app.fetch(
              new Request(`http://user.example/v1/chat/completions${search}`, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  ...(authorization ? { authorization } : {}),
                  ...headers,
                },
                body,
              }),
              env,
              ctx,
            );
            expect(res.status).toBe(200);
            await res.arrayBuffer();
          }
          const fingerprint = await requestFingerprint({
            authorization,
            method: "POST",
            path: `/v1/chat/completions${search}`,
            body,
          });
          const shard = shardForFingerprint(fingerprint, SHARDS);
          expect(calls).toEqual(
            attempts.map(() => ({ name: routerName(SHARDED, shard), deployment: SHARDED, shard, fingerprint })),
          );
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

/** The configured deployments this test calls (shards as edge-test-config.ts sets them). */
const DEPLOYMENTS = { [SHARDED]: SHARDS, misc: 1 } as const;
type Deployment = keyof typeof DEPLOYMENTS;

const router = (deployment: string, shard: number) => env.DEPLOYMENT_ROUTER.getByName(routerName(deployment, shard));

/** The error a refused call throws, or `undefined` when it was answered. */
async function refusal(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return String((error as Error).message);
  }
}

describe("a router answers only the calls that name it", () => {
  it("stats(deployment, shard) is answered by the router of that name only, with that identity", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Deployment>(SHARDED, "misc"),
        fc.integer({ min: 0, max: SHARDS + 1 }),
        fc.constantFrom<Deployment>(SHARDED, "misc"),
        fc.oneof(
          fc.integer({ min: 0, max: SHARDS + 1 }),
          fc.constantFrom<unknown>(-1, 0.5, Number.NaN, "0", null, undefined),
        ),
        async (deployment, objectShard, calledDeployment, calledShard) => {
          const answered = await router(deployment, objectShard)
            .stats(calledDeployment, calledShard as number)
            .then(
              (stats) => ({ stats }),
              (error: Error) => ({ error: String(error.message) }),
            );
          const names = calledDeployment === deployment && calledShard === objectShard;
          const why = `${routerName(deployment, objectShard)} called as ${calledDeployment}, ${String(calledShard)}`;
          if (names && objectShard < DEPLOYMENTS[deployment]) {
            expect("stats" in answered, `${why}: ${"error" in answered ? answered.error : ""}`).toBe(true);
            if ("stats" in answered)
              expect([answered.stats.deployment, answered.stats.shard], why).toEqual([deployment, objectShard]);
          } else {
            expect("error" in answered, why).toBe(true);
            if ("error" in answered) expect(answered.error, why).toMatch(/invalid router call|router |shard/);
          }
        },
      ),
      { numRuns: RUNS * 2, seed: SEED },
    );
  });

  it("regression: a router does not serve an acquire naming another shard or deployment", async () => {
    // Shard 1's router is built by a call naming it; before the fix it then served any deployment and shard.
    await router(SHARDED, 1).stats(SHARDED, 1);
    expect(await refusal(router(SHARDED, 1).acquire(SHARDED, 2, "misrouted"))).toMatch(
      /sharded#1 was called as sharded#2/,
    );
    expect(await refusal(router(SHARDED, 1).acquire("misc", 0, "misrouted"))).toMatch(/sharded#1 was called as misc#0/);
    // A fresh router named for a shard the deployment does not have: was built, with that identity.
    expect(await refusal(router(SHARDED, 9).stats(SHARDED, 9))).toMatch(/no shard 9/);
    // A fresh router called with another's name: was built as that one (misc's queue under sharded#3's name).
    expect(await refusal(router(SHARDED, 3).stats("misc", 0))).toMatch(/sharded#3 was called as misc#0/);
  });
});

describe("a malformed acquire is refused with the field it got wrong", () => {
  const malformed: [string, unknown[], RegExp][] = [
    ["a weight of 0", ["t", { weight: 0 }], /options\.weight/],
    ["a negative weight", ["t", { weight: -1 }], /options\.weight/],
    ["a weight of NaN", ["t", { weight: Number.NaN }], /options\.weight/],
    ["a weight past the plan's range", ["t", { weight: 1001 }], /options\.weight/],
    ["a priority that is not one", ["t", { priority: "urgent" }], /options\.priority/],
    ["a tenant name the configuration refuses", ["t", { tenant: "a b" }], /options\.tenant/],
    ["a negative wait", ["t", { waitedMs: -5 }], /options\.waitedMs/],
    ["an infinite wait", ["t", { waitedMs: Number.POSITIVE_INFINITY }], /options\.waitedMs/],
    ["a horizon of 0", ["t", { clientHorizonS: 0 }], /options\.clientHorizonS/],
    ["a numeric fingerprint", ["t", { fingerprint: 7 }], /options\.fingerprint/],
    ["an unknown option", ["t", { priorty: "batch" }], /options/],
    ["an empty ticket", ["", {}], /ticket/],
    ["a numeric ticket", [5, {}], /ticket/],
    ["a released slot without its flag", ["t", {}, { released: [["x"]], handedOff: [] }], /carried\.released\.0/],
    [
      "a handed-off slot with a weight of -2",
      ["t", {}, { released: [], handedOff: [["x", "acme", -2, "interactive"]] }],
      /carried\.handedOff\.0\.2/,
    ],
  ];

  it.each(malformed)("%s", async (_what, args, field) => {
    const before = await router(SHARDED, 0).stats(SHARDED, 0);
    const error = await refusal(
      (router(SHARDED, 0).acquire as (...a: unknown[]) => Promise<unknown>)(SHARDED, 0, ...args),
    );
    expect(error).toMatch(/invalid router call/);
    expect(error).toMatch(field);
    const after = await router(SHARDED, 0).stats(SHARDED, 0);
    expect([after.calls.acquire, after.admitted, after.queueDepth]).toEqual([
      before.calls.acquire,
      before.admitted,
      before.queueDepth,
    ]);
  });
});
