import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routerName } from "../../src/edge/router-protocol";
import { chat, stats0, waitFor } from "./helpers";

describe("slot hand-off (slotHandoffMs)", () => {
  it("the router gives an isolate leave to hand slots on only while nothing waits, and counts a hand-off as a placement", async () => {
    const router = env.DEPLOYMENT_ROUTER.getByName(routerName("hand-off-protocol", 0));
    const first = await router.acquire("hand-off-protocol", 0, "t1");
    expect(first).toMatchObject({ kind: "admitted", handoffMs: 1000 });
    // Two of three slots taken: one free, which the tenant headroom (1 by default) keeps.
    expect(await router.acquire("hand-off-protocol", 0, "t2")).not.toHaveProperty("handoffMs");
    // t1's slot went from one request to the next in an isolate, then t2 ended: leave again (two slots free).
    expect(await router.releaseAll([["t2", false]], [["t1", "beta", 1, "interactive"]])).toEqual({ handoffMs: 1000 });
    const s = await stats0("hand-off-protocol");
    expect(s.admitted).toBe(3);
    expect(s.completed).toBe(2);
    expect(s.activeLeases).toBe(1);
    expect(s.calls.handedOff).toBe(1);
    expect(s.tenants.beta?.admitted).toBe(1);
    await router.releaseAll([["t1", false]]);
    expect((await stats0("hand-off-protocol")).activeLeases).toBe(0);
    // A hand-off of a ticket the router does not hold (it restarted since): no leave for that isolate.
    expect(await router.releaseAll([], [["gone", undefined, 1, "interactive"]])).toEqual({});
    expect(await router.releaseAll([], [])).toEqual({ handoffMs: 1000 });
  });

  it("a retry it hinted that comes back by a hand-off is counted as a hinted retry admitted: its fingerprint rides in the batch", async () => {
    const router = env.DEPLOYMENT_ROUTER.getByName(routerName("hand-off-hinted", 0));
    expect(await router.acquire("hand-off-hinted", 0, "h1", { fingerprint: "fp-1" })).toMatchObject({
      kind: "admitted",
    });
    const queued = router.acquire("hand-off-hinted", 0, "h2", { fingerprint: "fp-2" }); // the queue's one place
    await waitFor(async () => (await stats0("hand-off-hinted")).queueDepth === 1, "h2 queued");
    const refused = await router.acquire("hand-off-hinted", 0, "h3", { fingerprint: "fp-hinted" });
    expect(refused).toMatchObject({ kind: "rejected", retryAfterS: expect.any(Number) });
    // h1's slot went, in an isolate, to h3's retry at once: early against its 30 s hint.
    await router.releaseAll([], [["h1", undefined, 1, "interactive", "fp-hinted"]]);
    expect((await stats0("hand-off-hinted")).hintedRetries.admitted).toEqual({ early: 1, on_time: 0, late: 0 });
    await router.releaseAll([["h1", false]]);
    expect(await queued).toMatchObject({ kind: "admitted" });
    await router.releaseAll([["h2", false]]);
  });

  it("through the Worker: every request is counted once, by its acquire or its hand-off, and every slot comes back", async () => {
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => chat("hand-off", `h${round}-${i}`)));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
      await Promise.all(answers.map((a) => a.arrayBuffer()));
    }
    for (let i = 0; i < 6; i++) expect((await chat("hand-off", `s${i}`)).status).toBe(200);
    await waitFor(async () => (await stats0("hand-off")).activeLeases === 0, "every slot released");
    const s = await stats0("hand-off");
    expect(s.admitted).toBe(24);
    expect(s.calls.acquire + s.calls.handedOff).toBe(24);
    expect(s.completed).toBe(24);
  });
});
