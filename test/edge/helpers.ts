import { SELF } from "cloudflare:test";
import { inject } from "vitest";
import type { ShardStats } from "../../src/edge/router-protocol";
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

/** Polls until `check` returns true (bounded: 200 polls of 25 ms). */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const fake = () => inject("fakeEngineUrl");

export interface FakeReplicaState {
  inflight: number;
  withAuthorization: number;
  served: string[];
  disconnected: number;
  down: boolean;
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

/** Sends a request straight to a fake replica, bypassing the edge (to load it). */
export function direct(id: string, content: string): Promise<Response> {
  return fetch(`${fake()}/r/${id}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content }] }),
  });
}
