import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { routerName, type ShardStats } from "../../src/edge/router-protocol";
import { TEST_ADMIN_TOKEN } from "../support/edge-test-config";

/** Sends a chat completion through the Worker; `content` is the fake engine's command. */
export function chat(model: string, content: string, init: { stream?: boolean; signal?: AbortSignal } = {}) {
  return SELF.fetch("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: init.stream ?? false, messages: [{ role: "user", content }] }),
    signal: init.signal,
  });
}

/** The stats of every shard of a deployment, through the authenticated endpoint. */
export async function stats(deployment: string): Promise<ShardStats[]> {
  const res = await SELF.fetch(`http://spillway/spillway/stats/${deployment}`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
  });
  if (res.status !== 200) throw new Error(`stats answered ${res.status}`);
  return ((await res.json()) as { shards: ShardStats[] }).shards;
}

/** Shard 0's stats. */
export async function stats0(deployment: string): Promise<ShardStats> {
  return (await stats(deployment))[0] as ShardStats;
}

/**
 * Polls until `check` returns true. Bounded by a count, not a clock (600 polls, 25 ms apart: 15 s or more), so a
 * condition that is never reached fails with its name well before the test's own timeout.
 */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const fake = () => inject("fakeEngineUrl");

export interface FakeReplicaState {
  inflight: number;
  withAuthorization: number;
  /** The `x-spillway-*` headers of each request served, in order. */
  internalHeaders: Record<string, string>[];
  served: string[];
  disconnected: number;
  down: boolean;
  draining: boolean;
  refusedDraining: number;
  full: boolean;
  refusedFull: number;
  probes: number;
}

export async function replicaState(id: string): Promise<FakeReplicaState> {
  return (await (await fetch(`${fake()}/r/${id}/__state`)).json()) as FakeReplicaState;
}

export async function releaseHold(id: string, key: string): Promise<void> {
  await (await fetch(`${fake()}/r/${id}/__release/${key}`, { method: "POST" })).arrayBuffer();
}

export async function setDown(id: string, down: boolean): Promise<void> {
  await (await fetch(`${fake()}/r/${id}/${down ? "__down" : "__up"}`, { method: "POST" })).arrayBuffer();
}

/** Makes a fake replica answer everything, `/load` included, with the engine server's draining 503 (`__up` ends it). */
export async function setDraining(id: string): Promise<void> {
  await (await fetch(`${fake()}/r/${id}/__drain`, { method: "POST" })).arrayBuffer();
}

/**
 * Makes a fake replica full with others' requests (`__up` ends it): its `/load` reports 64 more waiting, and it
 * answers a request 429 itself, as TGI does when its queue is full.
 */
export async function setFull(id: string): Promise<void> {
  await (await fetch(`${fake()}/r/${id}/__full`, { method: "POST" })).arrayBuffer();
}

/** Sends a request straight to a fake replica, bypassing the edge (to load it). */
export function direct(id: string, content: string): Promise<Response> {
  return fetch(`${fake()}/r/${id}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content }] }),
  });
}

/**
 * Stops (or moves) the clock of a deployment's shard-0 router, so which drains fall into which estimator
 * interval is the test's choice, not the machine's speed (`DeploymentRouter.setClockForTesting`).
 */
export async function setRouterClock(deployment: string, nowMs: number | null): Promise<void> {
  await env.DEPLOYMENT_ROUTER.getByName(routerName(deployment, 0)).setClockForTesting(nowMs);
}

/**
 * Warms a deployment's estimator by construction: `intervals` waves of `perInterval` short requests, each
 * wave drained while the router's clock stands still at `startMs + (i - 1) * intervalMs`, then the clock moved
 * on by one interval. Each interval is then closed (by the next wave, or by the stats read) with exactly
 * `perInterval` drains: every sample is `perInterval / interval`, whatever the machine's speed.
 */
export async function warmRouter(
  deployment: string,
  {
    startMs,
    intervalMs,
    intervals = 3,
    perInterval = 5,
  }: { startMs: number; intervalMs: number; intervals?: number; perInterval?: number },
): Promise<void> {
  for (let i = 1; i <= intervals; i++) {
    const wave = Array.from({ length: perInterval }, () => chat(deployment, "sleep:1"));
    for (const res of await Promise.all(wave)) {
      if (res.status !== 200) throw new Error(`a warm-up request answered ${res.status}`);
      await res.arrayBuffer();
    }
    await setRouterClock(deployment, startMs + i * intervalMs);
  }
}

/**
 * The range a computed `router_queue_drain_rate` hint must fall in (ms) for a refusal at `depth` with drain
 * rate `rate`: the saturation factor lies in [1, 1.5], jitter is +-20%, and both clamps are [1, 60] s.
 */
export function computedHintRangeMs(depth: number, rate: number): [number, number] {
  const clamp = (s: number) => Math.min(60, Math.max(1, s));
  return [
    Math.floor(clamp(clamp(depth / rate) * 0.8) * 1000),
    Math.ceil(clamp(clamp((depth / rate) * 1.5) * 1.2) * 1000),
  ];
}

/**
 * Checks an answer to a request that an operator's mistake kept from being served (src/edge/config-invalid.ts):
 * OpenAI's 500 `config_invalid` JSON with `message`, and exactly one `spillway.config_invalid` line among the
 * `console.error` calls `errors` recorded, saying `why`.
 *
 * @example
 * ```ts
 * await expectConfigInvalid(res, errors.mock.calls, CONFIG_INVALID, /^SPILLWAY_CONFIG is not valid JSON/);
 * ```
 */
export async function expectConfigInvalid(
  res: Response,
  errorCalls: readonly unknown[][],
  message: string,
  why: RegExp,
): Promise<void> {
  expect(res.status).toBe(500);
  expect(res.headers.get("content-type")).toBe("application/json");
  expect(((await res.json()) as { error: unknown }).error).toEqual({
    message,
    type: "server_error",
    param: null,
    code: "config_invalid",
  });
  const lines = errorCalls.map((call) => JSON.parse(String(call[0])) as { event: string; message: string });
  expect(lines.map((l) => l.event)).toEqual(["spillway.config_invalid"]);
  expect(lines[0]?.message).toMatch(why);
}
