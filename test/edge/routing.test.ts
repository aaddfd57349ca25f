import { SELF } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chat, direct, releaseHold, replicaState, setDown, stats, stats0, waitFor } from "./helpers";

afterEach(() => vi.restoreAllMocks());

describe("routing through the edge", () => {
  it("sends a request to the replica with the shorter queue", async () => {
    const held = [direct("sq-long", "hold:x"), direct("sq-long", "hold:y"), direct("sq-long", "hold:z")];
    await waitFor(async () => (await replicaState("sq-long")).inflight === 3, "load on the long replica");
    for (let i = 0; i < 3; i++) expect((await chat("shorter-queue", `r${i}`)).status).toBe(200);
    expect((await replicaState("sq-short")).served).toEqual(["r0", "r1", "r2"]);
    await releaseHold("sq-long", "x");
    await releaseHold("sq-long", "y");
    await releaseHold("sq-long", "z");
    await Promise.all(held);
  });

  it("gives back every slot exactly once when many requests end together (releases batched and carried)", async () => {
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => chat("release-batch", `b${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
    await Promise.all(answers.map((a) => a.arrayBuffer()));
    await waitFor(async () => (await stats0("release-batch")).activeLeases === 0, "every slot released");
    const s = await stats0("release-batch");
    expect(s.admitted).toBe(24);
    expect(s.calls.acquire).toBe(24);
    expect(s.calls.slotsReleased).toBe(24);
    expect(s.calls.releaseCalls).toBeLessThanOrEqual(24);
  });

  it("streams SSE through untouched and releases the slot when the stream ends", async () => {
    const res = await chat("streaming", "stream:5", { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    const events = text.split("\n\n").filter((e) => e.startsWith("data: "));
    expect(events).toHaveLength(6);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse((events[0] as string).slice(6)).choices[0].delta.content).toBe("t0");
    await waitFor(async () => (await stats0("streaming")).activeLeases === 0, "lease released");
  });

  it("a client that disconnects while queued leaves the queue and never reaches the engine", async () => {
    const head = chat("disconnect-queued", "hold:head");
    await waitFor(async () => (await replicaState("dq")).inflight === 1, "head at the engine");
    const controller = new AbortController();
    const gone = chat("disconnect-queued", "never-served", { signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(async () => (await stats0("disconnect-queued")).queueDepth === 1, "second queued");
    controller.abort();
    await gone;
    await waitFor(async () => (await stats0("disconnect-queued")).queueDepth === 0, "queue emptied by the cancel");
    await releaseHold("dq", "head");
    expect((await head).status).toBe(200);
    await waitFor(async () => (await stats0("disconnect-queued")).activeLeases === 0, "no slot held");
    expect((await replicaState("dq")).served).toEqual(["hold:head"]);
  });

  it("a client that disconnects while streaming gives its slot back (and is not logged as the replica's failure)", async () => {
    const printed = vi.spyOn(console, "log");
    const controller = new AbortController();
    const res = await chat("disconnect-streaming", "streamhold:k", { stream: true, signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("t0");
    expect((await stats0("disconnect-streaming")).activeLeases).toBe(1);
    controller.abort();
    await reader.cancel().catch(() => {});
    await waitFor(async () => (await stats0("disconnect-streaming")).activeLeases === 0, "slot released");
    expect(printed.mock.calls.map((args) => String(args[0])).filter((l) => l.includes("upstream_failed"))).toEqual([]);
    await releaseHold("ds", "k");
    // The slot is usable again.
    expect((await chat("disconnect-streaming", "after")).status).toBe(200);
  });

  it("a client's Expect: 100-continue (curl's, for a large body) is met by the edge, not sent to the replica", async () => {
    // The edge reads the whole body before it forwards. Sent on, the expectation made the replica answer 100 first,
    // which came back as the answer of the Worker's fetch: the client got a 500 internal_error seconds later.
    const res = await SELF.fetch("http://spillway/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", expect: "100-continue" },
      body: JSON.stringify({ model: "misc", messages: [{ role: "user", content: "expect-continue" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("chat.completion");
    expect((await replicaState("misc")).served).toContain("expect-continue");
  });

  it("moves traffic to the other replicas when one goes down", async () => {
    await setDown("fo-a", true);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await chat("failover", `f${i}`)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const [b, c] = await Promise.all([replicaState("fo-b"), replicaState("fo-c")]);
    expect(b.served.length + c.served.length).toBe(12);
    const s = await stats0("failover");
    expect(Object.entries(s.replicas).find(([url]) => url.endsWith("/fo-a"))?.[1]?.valid).toBe(false);
    await setDown("fo-a", false);
  });

  it("answers 503 with the static Retry-After when no replica is reachable, without queueing", async () => {
    await setDown("down-a", true);
    await setDown("down-b", true);
    const first = await chat("all-down", "x");
    expect(first.status).toBe(503);
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(8);
    expect(Number(first.headers.get("retry-after"))).toBeLessThanOrEqual(11);
    // The fleet is now known to be down: the next request is refused at once.
    const second = await chat("all-down", "y");
    expect(second.status).toBe(503);
    expect(((await second.json()) as { error: { message: string } }).error.message).toContain("No replica");
    expect((await stats0("all-down")).queueDepth).toBe(0);
  });

  it("sends every attempt of the same request to the same shard (its fingerprint's)", async () => {
    const before = await stats("sharded");
    for (let i = 0; i < 6; i++) expect((await chat("sharded", "the same request")).status).toBe(200);
    const after = await stats("sharded");
    const grew = after.filter((s, i) => s.admitted > (before[i]?.admitted ?? 0));
    expect(grew).toHaveLength(1);
    expect((grew[0]?.admitted ?? 0) - (before[grew[0]?.shard ?? 0]?.admitted ?? 0)).toBe(6);
  });

  it("spreads requests over the shards of a sharded deployment", async () => {
    const before = await stats("sharded");
    for (let i = 0; i < 24; i++) expect((await chat("sharded", `s${i}`)).status).toBe(200);
    const shards = await stats("sharded");
    expect(shards).toHaveLength(4);
    const added = shards.map((s, i) => s.admitted - (before[i]?.admitted ?? 0));
    expect(added.reduce((sum, n) => sum + n, 0)).toBe(24);
    expect(added.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  });
});
