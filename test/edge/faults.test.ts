import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { chat, direct, releaseHold, replicaState, setDraining, setFull, stats0, waitFor } from "./helpers";

afterEach(() => vi.restoreAllMocks());

describe("faults", () => {
  it("an engine killed mid-stream: the client gets a clean SSE error, the slot is released, the replica marked down, one spillway.upstream_failed line", async () => {
    const printed = vi.spyOn(console, "log");
    const res = await chat("midstream-kill", "streamkill", { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("t0");
    // As vLLM, SGLang and spillway's engine end a failed stream: an error event in OpenAI's shape, then [DONE].
    const [error, done] = text.trim().split("\n\n").slice(-2) as [string, string];
    expect(JSON.parse(error.slice("data: ".length)).error).toEqual({
      message: "the replica failed mid-stream",
      type: "server_error",
      param: null,
      code: "upstream_failed",
    });
    expect(done).toBe("data: [DONE]");
    await waitFor(async () => (await stats0("midstream-kill")).activeLeases === 0, "slot released");
    const s = await stats0("midstream-kill");
    expect(Object.values(s.replicas)[0]?.valid).toBe(false);
    // Which replica broke, for the operator: before, nothing was logged (the probe's line came only with a later
    // request, and never for a replica no probe reads).
    const lines = printed.mock.calls.map((args) => String(args[0])).filter((l) => l.includes("upstream_failed"));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        event: "spillway.upstream_failed",
        deployment: "midstream-kill",
        replica: expect.any(String),
        path: "/v1/chat/completions",
        stream: true,
        message: expect.any(String),
      },
    ]);
  });

  for (const [deployment, verb, code] of [
    ["midstream-kill-partial", "streamkill:partial", "upstream_failed"],
    ["stream-stall-partial", "streamstall:partial", "upstream_timeout"],
  ] as const) {
    it(`${verb}: an engine that dies or hangs half-way through an event: the half event is not sent, so the error event reads as an event of its own`, async () => {
      const res = await chat(deployment, verb, { stream: true });
      expect(res.status).toBe(200);
      const text = await res.text();
      // Before: the half event went out and the error event was glued to its last line, one `data:` line that is
      // not JSON (openai-node: a parse error, where the client should read the replica's failure).
      const events = text.trim().split("\n\n");
      const payloads = events.map((event) => event.slice("data: ".length));
      expect(payloads.at(-1)).toBe("[DONE]");
      const parsed = payloads.slice(0, -1).map((payload) => JSON.parse(payload));
      expect(parsed.map((p) => p.choices?.[0]?.delta?.content ?? p.error?.code)).toEqual(["t0", code]);
      await waitFor(async () => (await stats0(deployment)).activeLeases === 0, "slot released");
    });
  }

  it("an engine killed mid-answer (not streaming): 502, the slot is released, the replica marked down, one spillway.upstream_failed line", async () => {
    const printed = vi.spyOn(console, "log");
    const res = await chat("json-kill", "jsonkill");
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_failed");
    await waitFor(async () => (await stats0("json-kill")).activeLeases === 0, "slot released");
    expect(Object.values((await stats0("json-kill")).replicas)[0]?.valid).toBe(false);
    const lines = printed.mock.calls.map((args) => String(args[0])).filter((l) => l.includes("upstream_failed"));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ event: "spillway.upstream_failed", deployment: "json-kill", stream: false }),
    ]);
  });

  it("an engine that accepts and hangs: 504 after the deadline, and the slot comes back", async () => {
    const res = await chat("hang", "hang");
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    await waitFor(async () => (await stats0("hang")).activeLeases === 0, "slot released");
  });

  it("an engine that sends a stream's headers and then hangs: 504 after the deadline, the slot comes back, the replica marked down", async () => {
    // vLLM, SGLang and spillway's engine send an SSE answer's headers at once and its first event after queueing
    // and prefill: the deadline must cover the first event, or a hung engine holds a streaming request for ever.
    const res = await chat("stream-hang", "streamhang", { stream: true });
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    await waitFor(async () => (await stats0("stream-hang")).activeLeases === 0, "slot released");
    expect(Object.values((await stats0("stream-hang")).replicas)[0]?.valid).toBe(false);
  });

  it("an engine that hangs after a stream's first event: the stream ends with an upstream_timeout error event after upstreamIdleTimeoutS, the slot comes back, the replica is marked down and its connection closed", async () => {
    const printed = vi.spyOn(console, "log");
    const res = await chat("stream-stall", "streamstall", { stream: true });
    expect(res.status).toBe(200);
    // Before: the stream had no deadline after its first event and never ended (the slot held for leaseTimeoutS).
    const text = await res.text();
    expect(text).toContain("t0");
    const [error, done] = text.trim().split("\n\n").slice(-2) as [string, string];
    expect(JSON.parse(error.slice("data: ".length)).error).toMatchObject({ param: null, code: "upstream_timeout" });
    expect(done).toBe("data: [DONE]");
    await waitFor(async () => (await stats0("stream-stall")).activeLeases === 0, "slot released");
    expect(Object.values((await stats0("stream-stall")).replicas)[0]?.valid).toBe(false);
    await waitFor(
      async () => (await replicaState("stream-stall")).disconnected === 1,
      "the engine's connection closed",
    );
    expect(
      printed.mock.calls.map((args) => String(args[0])).filter((l) => l.includes("upstream_idle_timeout")),
    ).toEqual([expect.stringContaining('"deployment":"stream-stall"')]);
  });

  it("an engine that hangs mid-answer (not streaming): 504 after upstreamIdleTimeoutS, the slot comes back, the replica is marked down", async () => {
    const res = await chat("json-stall", "jsonstall");
    // Before: the edge waited for the rest of the body for ever.
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    await waitFor(async () => (await stats0("json-stall")).activeLeases === 0, "slot released");
    expect(Object.values((await stats0("json-stall")).replicas)[0]?.valid).toBe(false);
    await waitFor(async () => (await replicaState("json-stall")).disconnected === 1, "the engine's connection closed");
  });

  it("an engine draining for shutdown (503 to everything): its refusal goes to another replica, and its probe marks it down", async () => {
    // Both replicas are probed (0 each); one holds a request, so the other has the shorter queue and is picked next.
    const held = chat("draining", "hold:d1");
    await waitFor(
      async () => (await replicaState("dr-a")).inflight + (await replicaState("dr-b")).inflight === 1,
      "one request held",
    );
    const busy = (await replicaState("dr-a")).inflight === 1 ? "dr-a" : "dr-b";
    const idle = busy === "dr-a" ? "dr-b" : "dr-a";
    // The idle one starts draining, as src/engine/shutdown.ts does on SIGTERM; the router's report of it is fresh.
    await setDraining(idle);
    const res = await chat("draining", "after");
    // Before: the engine's 503 was passed on although the other replica had room, and the replica stayed the
    // router's first choice (its slot came back at once, as not failed), so a queue drained into it as 503s.
    expect(res.status).toBe(200);
    expect(((await res.json()) as { replica: string }).replica).toBe(busy);
    expect((await replicaState(idle)).served).toEqual([]);
    const refusedBefore = (await replicaState(idle)).refusedDraining;
    expect(refusedBefore).toBeGreaterThanOrEqual(1);
    // Released as full, it is probed before it is chosen again, not sent requests; its probe answers 503 (a
    // draining engine's /load does): down.
    expect((await chat("draining", "later")).status).toBe(200);
    expect((await replicaState(idle)).served).toEqual([]);
    const s = await stats0("draining");
    expect(s.replicas[`${inject("fakeEngineUrl")}/r/${idle}`]?.valid).toBe(false);
    await releaseHold(busy, "d1");
    expect((await held).status).toBe(200);
    await waitFor(async () => (await stats0("draining")).activeLeases === 0, "slots released");
  });

  it("an engine that answers 429 itself (TGI's full queue): its answer passed on, and it is not chosen next while another has room", async () => {
    // Both replicas are probed (0 each); one holds a request, so the other has the shorter queue and is picked next.
    const held = chat("replica-429", "hold:f1");
    await waitFor(
      async () => (await replicaState("rf-a")).inflight + (await replicaState("rf-b")).inflight === 1,
      "one request held",
    );
    const busy = (await replicaState("rf-a")).inflight === 1 ? "rf-a" : "rf-b";
    const full = busy === "rf-a" ? "rf-b" : "rf-a";
    // Others' requests fill the idle one after the router's probe: its report (0) stays fresh for 10 s.
    await setFull(full);
    const refused = await chat("replica-429", "refused");
    // Passed on as it came: the replica's status, Retry-After and body (no retry elsewhere).
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(await refused.json()).toEqual({ error: "Model is overloaded", error_type: "overloaded" });
    await waitFor(async () => (await stats0("replica-429")).activeLeases === 1, "the refused request's slot released");
    const s = await stats0("replica-429");
    // Full, not down: valid, at the cap.
    expect(s.replicas[`${inject("fakeEngineUrl")}/r/${full}`]).toMatchObject({ valid: true, queueLength: 2 });
    // Before: released as not failed, the full replica kept its fresh report of room (the shorter queue, 0 against
    // 1) and took the next request too, answering 429 again. Now it is probed first (64 waiting), and passed over.
    const next = await chat("replica-429", "next");
    expect(next.status).toBe(200);
    expect(((await next.json()) as { replica: string }).replica).toBe(busy);
    expect((await replicaState(full)).refusedFull).toBe(1);
    await releaseHold(busy, "f1");
    expect((await held).status).toBe(200);
    await waitFor(async () => (await stats0("replica-429")).activeLeases === 0, "slots released");
  });

  it("an engine slow to answer probes is passed over for one that answers", async () => {
    await fetch(`${inject("fakeEngineUrl")}/r/sp-slow/__slowload/3000`, { method: "POST" });
    for (let i = 0; i < 4; i++) expect((await chat("slow-probe", `p${i}`)).status).toBe(200);
    expect((await replicaState("sp-fast")).served).toEqual(["p0", "p1", "p2", "p3"]);
    expect((await replicaState("sp-slow")).served).toEqual([]);
  });

  it("forwarded requests are signed; the engine refuses unsigned ones", async () => {
    expect((await chat("signed", "hello")).status).toBe(200);
    const unsigned = await direct("signed-a", "sneaky");
    expect(unsigned.status).toBe(401);
    const state = await replicaState("signed-a");
    expect(state.served).toEqual(["hello"]);
  });
});
