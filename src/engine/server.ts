import { Hono } from "hono";

/**
 * The engine server's HTTP app (foundation slice: health and a deterministic echo completion).
 * The engine-server issue replaces the completion with the token-budget scheduler and engine.
 *
 * @example
 * ```ts
 * import { serve } from "@hono/node-server";
 * serve({ fetch: createEngineApp({ name: "engine-a" }).fetch, hostname: "127.0.0.1", port: 8001 });
 * ```
 */
export function createEngineApp(options: { name: string }): Hono {
  const app = new Hono();
  app.get("/health", (c) => c.json({ ok: true, name: options.name }));
  app.post("/v1/chat/completions", async (c) => {
    const body = (await c.req.json()) as { model?: string; messages?: { content?: string }[] };
    const last = body.messages?.at(-1)?.content ?? "";
    return c.json({
      id: "chatcmpl-slice",
      object: "chat.completion",
      created: 0,
      model: body.model ?? "",
      served_by: options.name,
      choices: [{ index: 0, message: { role: "assistant", content: `echo: ${last}` }, finish_reason: "stop" }],
    });
  });
  return app;
}
