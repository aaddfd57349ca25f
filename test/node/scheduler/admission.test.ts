import { describe, expect, it } from "vitest";
import {
  type Batch,
  checkSchedulerInvariants,
  Scheduler,
  SchedulerInputError,
  SchedulerProtocolError,
} from "../../../src/scheduler/index.js";
import { prompt, step } from "./drive.js";

function prefillIds(batch: Batch): string[] {
  return batch.kind === "prefill" ? batch.entries.map((e) => e.request.id) : [];
}

describe("admission", () => {
  it("needs strictly less than what remains (the >= rule), and holds back running ignore_eos requests at 1.0", () => {
    const s = new Scheduler({ maxTotalTokens: 100 });
    s.submit({ id: "A", promptTokenIds: prompt(10, 0), maxNewTokens: 40, ignoreEos: true });
    s.submit({ id: "B", promptTokenIds: prompt(10, 100), maxNewTokens: 40, ignoreEos: true });
    // A is charged 10 + 40 = 50; B needs 50 >= 100 - 50: not this round.
    expect(prefillIds(step(s).batch)).toEqual(["A"]);
    // A runs: 10 KV + (40 - 1) * 1.0 reserved = 49; B needs 50 < 51.
    expect(prefillIds(step(s).batch)).toEqual(["B"]);
  });

  it("the >= rule holds after locking a cached prefix too: a request that then needs exactly what remains waits", () => {
    // X leaves its 40-token prompt in the cache (evictable); Z runs (ignore_eos: held back at 1.0). Y reuses X's
    // prompt: before the lock it needs far less than what remains, after it (a locked prefix is not capacity) 40
    // less remains. SGLang's PrefillAdder checks `>=` again once the prefix is locked.
    const afterLock = (slack: number) => {
      const s = new Scheduler({ maxTotalTokens: 100 });
      const shared = prompt(40, 0);
      s.submit({ id: "X", promptTokenIds: shared, maxNewTokens: 1 });
      step(s);
      s.submit({ id: "Z", promptTokenIds: prompt(10, 200), maxNewTokens: 30, ignoreEos: true });
      step(s);
      expect(s.state()).toMatchObject({ freeTokens: 50, evictableTokens: 40 });
      const remaining = s.admissionHeadroomTokens(); // 50 + 40 - 29
      expect(remaining).toBe(61);
      // Y: 10 new tokens + max_new_tokens = what remains after the lock, less `slack`.
      s.submit({ id: "Y", promptTokenIds: [...shared, ...prompt(10, 500)], maxNewTokens: remaining - 40 - 10 - slack });
      return s.nextBatch(1);
    };
    expect(afterLock(0).kind).toBe("decode"); // 21 >= 61 - 40: Y waits, Z decodes
    const batch = afterLock(1); // 20 < 21
    expect(prefillIds(batch)).toEqual(["Y"]);
    expect(batch.kind === "prefill" && batch.entries[0]?.cachedTokens).toBe(40);
  });

  it("charges a request admitted this round its full clipped maxNew, even a retracted one with output so far", () => {
    // R and S run until the pool is full; S (the later of equal outputs and prompts) is retracted; R finishes.
    const s = new Scheduler({ maxTotalTokens: 100, disableRadixCache: true, scheduleConservativeness: 0 });
    s.submit({ id: "R", promptTokenIds: prompt(10, 0), maxNewTokens: 50 });
    s.submit({ id: "S", promptTokenIds: prompt(10, 100), maxNewTokens: 50 });
    let rEnded = false;
    for (let i = 0; i < 200 && !rEnded; i++) rEnded = step(s, i).ended.some((e) => e.id === "R");
    expect(rEnded).toBe(true);
    const back = s.get("S");
    expect(back?.status).toBe("waiting");
    expect(back?.retractions).toBe(1);
    const out = back?.outputTokenIds.length ?? 0;
    expect(out).toBeGreaterThan(0);
    // S is admitted (10 + out to prefill, 50 - out to come: 60 < 100) and charged 10 + out + min(50, CLIP) =
    // 60 + out, leaving 40 - out; T needs 20. Charging only S's remaining 50 - out would leave 40 and let T in.
    expect(out).toBeGreaterThan(20);
    s.submit({ id: "T", promptTokenIds: prompt(10, 900), maxNewTokens: 10 });
    const batch = s.nextBatch(300);
    expect(prefillIds(batch)).toEqual(["S"]);
    expect(batch.kind === "prefill" && batch.entries[0]?.extendTokens).toBe(10 + out);
  });

  it("holds back running requests at the new-token ratio", () => {
    const s = new Scheduler({ maxTotalTokens: 100 });
    s.submit({ id: "A", promptTokenIds: prompt(10, 0), maxNewTokens: 41 });
    s.submit({ id: "B", promptTokenIds: prompt(30, 100), maxNewTokens: 40 });
    expect(prefillIds(step(s).batch)).toEqual(["A"]); // B: 70 >= 100 - 51
    // A runs: 10 KV + 40 * 0.7 = 28 held back -> 62 remain; B needs 70.
    expect(step(s).batch.kind).toBe("decode");
    s.finish("A");
    expect(prefillIds(step(s).batch)).toEqual(["B"]);
  });

  it("charges a cached prefix nothing but its lock, and counts an evictable prefix as capacity", () => {
    const s = new Scheduler({ maxTotalTokens: 100 });
    const shared = prompt(40, 0);
    s.submit({ id: "X", promptTokenIds: shared, maxNewTokens: 1 });
    expect(step(s).ended.map((e) => e.reason)).toEqual(["length"]);
    expect(s.state()).toMatchObject({ freeTokens: 60, evictableTokens: 40, usedTokens: 0, tokenUsage: 0 });

    s.submit({ id: "Y", promptTokenIds: [...shared, ...prompt(10, 500)], maxNewTokens: 5 });
    const y = s.nextBatch(1);
    if (y.kind !== "prefill") throw new Error("expected a prefill");
    expect(y.entries[0]).toMatchObject({ extendTokens: 10, cachedTokens: 40, startPosition: 40, lastChunk: true });
    expect(s.completeBatch({ tokenIds: [7] }).events[0]).toMatchObject({
      type: "prefill",
      newSeq: 1,
      newToken: 10,
      cachedToken: 40,
    });
    s.finish("Y");

    // Nothing runs; 50 free + 50 cached (evictable). Z needs 60 + 30 = 90 < 100 only if the cache counts.
    expect(s.state()).toMatchObject({ freeTokens: 50, evictableTokens: 50 });
    s.submit({ id: "Z", promptTokenIds: prompt(60, 900), maxNewTokens: 30 });
    expect(prefillIds(s.nextBatch(2))).toEqual(["Z"]);
    expect(s.state().cachedTokens).toBeLessThanOrEqual(40); // evicted to make room
    checkSchedulerInvariants(s);
  });

  it("a cached prefix that is locked by a running request is not capacity", () => {
    const s = new Scheduler({ maxTotalTokens: 100, scheduleConservativeness: 0 });
    s.submit({ id: "A", promptTokenIds: prompt(40, 0), maxNewTokens: 50 });
    step(s);
    // A runs and locks its 40 prompt tokens: 60 free, 0 evictable; ratio 0 reserves nothing.
    expect(s.state()).toMatchObject({ freeTokens: 60, evictableTokens: 0 });
    s.submit({ id: "B", promptTokenIds: prompt(40, 1000), maxNewTokens: 20 });
    expect(step(s).batch.kind).toBe("decode"); // 60 >= 60 - 1 (A's decode slot)
  });

  it("recomputes the prefix once a retracted request comes back, prefilling prompt + output", () => {
    const s = new Scheduler({ maxTotalTokens: 60, scheduleConservativeness: 0, clipMaxNewTokens: 10 });
    // Both run; the pool fills; B (equal output, longer prompt) is retracted; A finishes; B comes back.
    s.submit({ id: "A", promptTokenIds: prompt(10, 0), maxNewTokens: 30 });
    s.submit({ id: "B", promptTokenIds: prompt(12, 100), maxNewTokens: 100 });
    let back: Batch | undefined;
    for (let i = 0; i < 100 && back === undefined; i++) {
      const { batch } = step(s);
      if (batch.kind === "prefill" && batch.entries.some((e) => e.request.retractions > 0)) back = batch;
    }
    if (back?.kind !== "prefill") throw new Error("no re-admission");
    const entry = back.entries.find((e) => e.request.retractions > 0);
    if (entry === undefined) throw new Error("unreachable");
    const r = entry.request;
    // The step has completed, so the output already holds the token this prefill sampled.
    expect(entry.startPosition + entry.extendTokens).toBe(r.promptTokenIds.length + r.outputTokenIds.length - 1);
    expect(r.id).toBe("B");
    expect(entry.cachedTokens).toBe(12); // its prompt was still cached
    expect(entry.extendTokens).toBe(20); // the 20 tokens it had generated
  });

  it("stops at max running requests and at the prefill token budget (but always takes one)", () => {
    const s = new Scheduler({ maxTotalTokens: 10_000, maxRunningRequests: 2, maxPrefillTokens: 100 });
    for (let i = 0; i < 4; i++) s.submit({ id: `r${i}`, promptTokenIds: prompt(60, i * 100), maxNewTokens: 5 });
    expect(prefillIds(step(s).batch)).toEqual(["r0"]); // r1: 60 > 100 - 60
    expect(prefillIds(step(s).batch)).toEqual(["r1"]);
    expect(step(s).batch.kind).toBe("decode"); // two running: max reached

    // Exactly what is left of the budget is not enough: SGLang's PrefillAdder stops at `>=` (the spec said `>`).
    const exact = new Scheduler({ maxTotalTokens: 10_000, maxPrefillTokens: 120 });
    for (let i = 0; i < 2; i++) exact.submit({ id: `e${i}`, promptTokenIds: prompt(60, i * 100), maxNewTokens: 5 });
    expect(prefillIds(step(exact).batch)).toEqual(["e0"]); // e1: 60 >= 120 - 60
    expect(prefillIds(step(exact).batch)).toEqual(["e1"]);

    const t = new Scheduler({ maxTotalTokens: 10_000, maxPrefillTokens: 50, chunkedPrefillSize: -1 });
    t.submit({ id: "long", promptTokenIds: prompt(80, 0), maxNewTokens: 5 });
    expect(prefillIds(step(t).batch)).toEqual(["long"]);
  });

  it("prefills a long prompt in chunks; only the last chunk samples a token and reserves decode tokens", () => {
    const s = new Scheduler({ maxTotalTokens: 1000, chunkedPrefillSize: 32 });
    s.submit({ id: "long", promptTokenIds: prompt(100, 0), maxNewTokens: 5 });
    s.submit({ id: "next", promptTokenIds: prompt(10, 500), maxNewTokens: 5 });
    const seen: Array<[number, number, boolean, number]> = [];
    for (let i = 0; i < 4; i++) {
      const batch = s.nextBatch(i);
      if (batch.kind !== "prefill") throw new Error("expected prefill");
      const e = batch.entries[0];
      const ev = s.completeBatch({ tokenIds: batch.entries.map(() => 7) }).events.at(-1);
      if (e === undefined || ev?.type !== "prefill") throw new Error("unreachable");
      seen.push([e.startPosition, e.extendTokens, e.lastChunk, ev.pendingToken]);
      if (i < 3) expect(batch.entries).toHaveLength(1);
      else expect(prefillIds(batch)).toEqual(["long", "next"]);
      if (i < 3) expect(s.get("long")?.outputTokenIds).toEqual([]);
    }
    expect(seen).toEqual([
      [0, 32, false, 68 + 10],
      [32, 32, false, 36 + 10],
      [64, 32, false, 4 + 10],
      [96, 4, true, 0],
    ]);
    expect(s.get("long")?.outputTokenIds).toEqual([7]);
    checkSchedulerInvariants(s);
  });

  it("orders by policy: lof takes the longest output first; random follows the injected source", () => {
    const s = new Scheduler({ maxTotalTokens: 10_000, schedulePolicy: "lof" });
    s.submit({ id: "short", promptTokenIds: prompt(5, 0), maxNewTokens: 5 });
    s.submit({ id: "long", promptTokenIds: prompt(5, 100), maxNewTokens: 500 });
    expect(prefillIds(s.nextBatch(0))).toEqual(["long", "short"]);

    const order = (seed: number) => {
      let x = seed;
      const random = () => {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        return x / 2 ** 31;
      };
      const r = new Scheduler({ maxTotalTokens: 10_000, schedulePolicy: "random", random });
      for (let i = 0; i < 6; i++) r.submit({ id: `r${i}`, promptTokenIds: prompt(5, i * 10), maxNewTokens: 5 });
      return prefillIds(r.nextBatch(0));
    };
    expect(order(1)).toEqual(order(1));
    expect(order(1)).not.toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
    // The scheduler reads no global randomness: the random policy needs its source.
    expect(() => new Scheduler({ maxTotalTokens: 10_000, schedulePolicy: "random" })).toThrow(/random source/);
  });

  it("lpm takes the longest cached prefix first", () => {
    const s = new Scheduler({ maxTotalTokens: 10_000, schedulePolicy: "lpm" });
    s.submit({ id: "warm", promptTokenIds: prompt(50, 0), maxNewTokens: 1 });
    step(s);
    s.submit({ id: "cold", promptTokenIds: prompt(50, 1000), maxNewTokens: 1 });
    s.submit({ id: "hit", promptTokenIds: [...prompt(50, 0), 9999], maxNewTokens: 1 });
    expect(prefillIds(s.nextBatch(1))).toEqual(["hit", "cold"]);
  });

  it("lpm falls back to fcfs when more than 128 wait (SGLang stops computing prefix matches there)", () => {
    const firstAndLast = (waiting: number) => {
      const s = new Scheduler({ maxTotalTokens: 100_000, schedulePolicy: "lpm" });
      s.submit({ id: "warm", promptTokenIds: prompt(50, 0), maxNewTokens: 1 });
      step(s);
      for (let i = 0; i < waiting - 1; i++)
        s.submit({ id: `cold${i}`, promptTokenIds: prompt(5, 1_000 + i * 10), maxNewTokens: 1 });
      s.submit({ id: "hit", promptTokenIds: [...prompt(50, 0), 9999], maxNewTokens: 1 });
      const ids = prefillIds(s.nextBatch(1));
      expect(ids).toHaveLength(waiting);
      return [ids[0], ids.at(-1)];
    };
    expect(firstAndLast(128)).toEqual(["hit", "cold126"]); // 128 wait: longest prefix first
    expect(firstAndLast(129)).toEqual(["cold0", "hit"]); // 129 wait: arrival order
  });
});

describe("bad input is refused and changes nothing", () => {
  const cases: Array<[string, Parameters<Scheduler["submit"]>[0]]> = [
    ["empty_prompt", { id: "x", promptTokenIds: [], maxNewTokens: 1 }],
    ["bad_max_new_tokens", { id: "x", promptTokenIds: [1], maxNewTokens: -1 }],
    ["bad_max_new_tokens", { id: "x", promptTokenIds: [1], maxNewTokens: 1.5 }],
    ["bad_token_ids", { id: "x", promptTokenIds: [1, -2], maxNewTokens: 1 }],
    ["duplicate_id", { id: "dup", promptTokenIds: [1], maxNewTokens: 1 }],
    ["prompt_too_long", { id: "x", promptTokenIds: prompt(90, 0), maxNewTokens: 10 }],
    ["prompt_too_long", { id: "x", promptTokenIds: prompt(100, 0), maxNewTokens: 0 }],
  ];
  for (const [code, req] of cases) {
    it(`${code}: ${JSON.stringify({ ...req, promptTokenIds: req.promptTokenIds.length })}`, () => {
      const s = new Scheduler({ maxTotalTokens: 100 });
      s.submit({ id: "dup", promptTokenIds: [5, 6], maxNewTokens: 3 });
      const before = s.state();
      let error: unknown;
      try {
        s.submit(req);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SchedulerInputError);
      expect((error as SchedulerInputError).code).toBe(code);
      expect(s.state()).toEqual(before);
    });
  }

  it("accepts a request that only just fits an empty pool", () => {
    const s = new Scheduler({ maxTotalTokens: 100 });
    s.submit({ id: "x", promptTokenIds: prompt(89, 0), maxNewTokens: 10 });
    expect(s.nextBatch(0).kind).toBe("prefill");
  });

  it("refuses out-of-order driving", () => {
    const s = new Scheduler({ maxTotalTokens: 100 });
    expect(() => s.completeBatch({ tokenIds: [] })).toThrow(SchedulerProtocolError);
    s.submit({ id: "x", promptTokenIds: [1, 2], maxNewTokens: 3 });
    s.nextBatch(0);
    expect(() => s.nextBatch(1)).toThrow(SchedulerProtocolError);
    expect(() => s.completeBatch({ tokenIds: [1, 2] })).toThrow(SchedulerProtocolError);
    expect(s.completeBatch({ tokenIds: [1] }).ended).toEqual([]);
  });
});

describe("ending requests", () => {
  it("stop, length and max_new_tokens 0", () => {
    const s = new Scheduler({ maxTotalTokens: 1000 });
    s.submit({ id: "zero", promptTokenIds: [1, 2], maxNewTokens: 0 });
    s.submit({ id: "two", promptTokenIds: [3, 4], maxNewTokens: 2 });
    s.submit({ id: "eos", promptTokenIds: [5, 6], maxNewTokens: 9 });
    const b = s.nextBatch(0);
    expect(s.completeBatch({ tokenIds: [10, 11, 12], stopped: ["eos"] }).ended).toEqual([
      { id: "zero", reason: "length", outputTokenIds: [] },
      { id: "eos", reason: "stop", outputTokenIds: [12] },
    ]);
    expect(b.kind).toBe("prefill");
    s.nextBatch(1);
    expect(s.completeBatch({ tokenIds: [13] }).ended).toEqual([
      { id: "two", reason: "length", outputTokenIds: [11, 13] },
    ]);
    expect(s.nextBatch(2).kind).toBe("idle");
    checkSchedulerInvariants(s);
  });

  it("abort while a step is in flight releases at once and ignores the token", () => {
    const s = new Scheduler({ maxTotalTokens: 1000 });
    s.submit({ id: "a", promptTokenIds: [1, 2, 3], maxNewTokens: 5 });
    s.submit({ id: "b", promptTokenIds: [4, 5, 6], maxNewTokens: 5 });
    step(s);
    s.nextBatch(1);
    expect(s.abort("a", 1)).toEqual({ type: "abort", now: 1, id: "a", message: "Client disconnected.", status: 499 });
    expect(s.abort("a")).toBeUndefined();
    s.completeBatch({ tokenIds: [8, 9] });
    expect(s.get("a")).toBeUndefined();
    expect(s.get("b")?.outputTokenIds).toEqual([7, 9]);
    expect(s.state().counters.abortedRequestsTotal).toBe(1);
    checkSchedulerInvariants(s);
  });
});

describe("admission headroom (the engine's /load estimate)", () => {
  it("is free + evictable minus the running requests' clipped remaining output, ratio-scaled unless ignore_eos", () => {
    const clip = 50;
    const s = new Scheduler({ maxTotalTokens: 2_000, clipMaxNewTokens: clip });
    const ids = ["a", "b", "c", "d"];
    s.submit({ id: "a", promptTokenIds: prompt(100, 0), maxNewTokens: 80 });
    s.submit({ id: "b", promptTokenIds: prompt(60, 1000), maxNewTokens: 20, ignoreEos: true });
    s.submit({ id: "c", promptTokenIds: prompt(40, 2000), maxNewTokens: 200 });
    const expected = () => {
      const st = s.state();
      let reserved = 0;
      for (const id of ids) {
        const r = s.get(id);
        if (r?.status !== "running") continue;
        const remaining = Math.min(Math.max(r.maxNewTokens - r.outputTokenIds.length, 0), clip);
        reserved += remaining * (r.ignoreEos ? 1 : st.newTokenRatio);
      }
      return st.freeTokens + st.evictableTokens - reserved;
    };
    expect(s.admissionHeadroomTokens()).toBe(2_000);
    for (let i = 0; i < 30; i++) {
      if (i === 5) s.submit({ id: "d", promptTokenIds: prompt(30, 3000), maxNewTokens: 10 });
      step(s, i * 0.05);
      expect(s.admissionHeadroomTokens()).toBeCloseTo(expected(), 9);
    }
    expect(s.admissionHeadroomTokens()).toBeLessThan(2_000);
  });
});

describe("checkSchedulerInvariants", () => {
  it("passes a consistent scheduler and names a leaked slot", () => {
    const s = new Scheduler({ maxTotalTokens: 1_000 });
    s.submit({ id: "a", promptTokenIds: prompt(10, 0), maxNewTokens: 5 });
    step(s);
    expect(() => checkSchedulerInvariants(s)).not.toThrow();
    // Leak one page behind the scheduler's back: the recount must see it.
    (s.internals().pool as { freePages: number }).freePages -= 1;
    expect(() => checkSchedulerInvariants(s)).toThrow(/slots: free/);
  });
});
