import { describe, expect, inject, it } from "vitest";
import { chat, direct, replicaState, stats0, waitFor } from "./helpers";

describe("faults", () => {
  it("an engine killed mid-stream: the client gets a clean SSE error, the slot is released, the replica marked down", async () => {
    const res = await chat("midstream-kill", "streamkill", { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("t0");
    const last = text.trim().split("\n\n").at(-1) as string;
    expect(JSON.parse(last.slice("data: ".length)).error.code).toBe("upstream_failed");
    await waitFor(async () => (await stats0("midstream-kill")).activeLeases === 0, "slot released");
    const s = await stats0("midstream-kill");
    expect(Object.values(s.replicas)[0]?.valid).toBe(false);
  });

  it("an engine killed mid-answer (not streaming): 502, the slot is released, the replica marked down", async () => {
    const res = await chat("json-kill", "jsonkill");
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_failed");
    await waitFor(async () => (await stats0("json-kill")).activeLeases === 0, "slot released");
    expect(Object.values((await stats0("json-kill")).replicas)[0]?.valid).toBe(false);
  });

  it("an engine that accepts and hangs: 504 after the deadline, and the slot comes back", async () => {
    const res = await chat("hang", "hang");
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    await waitFor(async () => (await stats0("hang")).activeLeases === 0, "slot released");
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
