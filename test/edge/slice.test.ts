import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("Worker -> DeploymentRouter -> engine server", () => {
  it("forwards a chat completion to a real engine server and returns its answer", async () => {
    const res = await SELF.fetch("http://spillway/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: "ping" }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[]; served_by: string };
    expect(body.choices[0]?.message.content).toBe("echo: ping");
    expect(["engine-a", "engine-b"]).toContain(body.served_by);
  });

  it("spreads requests over both replicas (the router's choice reaches the engines)", async () => {
    const servedBy = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await SELF.fetch("http://spillway/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: `${i}` }] }),
      });
      servedBy.add(((await res.json()) as { served_by: string }).served_by);
    }
    expect(servedBy).toEqual(new Set(["engine-a", "engine-b"]));
  });

  it("answers 404 for an unknown model", async () => {
    const res = await SELF.fetch("http://spillway/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "nope", messages: [] }),
    });
    expect(res.status).toBe(404);
  });
});
