import { describe, expect, it } from "vitest";
import { createEngineApp } from "../../src/engine/server";

describe("engine server slice", () => {
  it("answers health", async () => {
    const res = await createEngineApp({ name: "e" }).request("/health");
    expect(await res.json()).toEqual({ ok: true, name: "e" });
  });
});
