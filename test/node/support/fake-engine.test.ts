import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeEngine } from "../../support/fake-engine";

/** The workerd tests' fake engine is a test double; its rules must hold, or those tests hang instead of failing. */
describe("the fake engine of the workerd tests", () => {
  let fake: Awaited<ReturnType<typeof startFakeEngine>>;
  beforeAll(async () => {
    fake = await startFakeEngine();
  });
  afterAll(() => fake.close());

  const send = (replica: string, content: string) =>
    fetch(`${fake.url}/r/${replica}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "x", messages: [{ role: "user", content }] }),
    });
  const state = async (replica: string) =>
    (await (await fetch(`${fake.url}/r/${replica}/__state`)).json()) as { inflight: number };

  it("answers every request holding a key once the key is released, not only the last to arrive", async () => {
    const held = [send("two-holders", "hold:k"), send("two-holders", "hold:k"), send("two-holders", "hold:k")];
    for (let i = 0; i < 500 && (await state("two-holders")).inflight < 3; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await state("two-holders")).inflight).toBe(3);
    await (await fetch(`${fake.url}/r/two-holders/__release/k`, { method: "POST" })).arrayBuffer();
    const statuses = await Promise.all(held.map(async (r) => (await r).status));
    expect(statuses).toEqual([200, 200, 200]);
    // A key already released is answered at once.
    expect((await send("two-holders", "hold:k")).status).toBe(200);
  });
});
