/**
 * `npx tsx src/bench/null-server.ts --port 8002`: a do-nothing OpenAI-style streaming server that answers
 * every `POST /v1/completions` with `max_tokens` one-word chunks as fast as it can write them. Used to
 * measure the bench client's own ceiling (tokens/s it can parse), separately from any engine.
 */
import { createServer } from "node:http";
import { commandFlags, numberFlag } from "./command-line";

const port = commandFlags(
  "npx tsx src/bench/null-server.ts [--port <n>]",
  { options: { port: { type: "string" } } },
  ({ values }) => numberFlag("port", values.port, 8002, { min: 1, max: 65535, integer: true }),
);
const chunk = `data: ${JSON.stringify({ id: "x", object: "text_completion", created: 0, model: "null", choices: [{ index: 0, text: " the", logprobs: null, finish_reason: null }] })}\n\n`;

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/v1/models") {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ object: "list", data: [{ id: "null", object: "model" }] }));
    return;
  }
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    const n = Number((JSON.parse(body) as { max_tokens?: number }).max_tokens ?? 16);
    res.writeHead(200, { "content-type": "text/event-stream" });
    let sent = 0;
    // Write in slices so concurrent streams interleave, as an engine's per-step writes do.
    const write = () => {
      const slice = Math.min(64, n - sent);
      res.write(chunk.repeat(slice));
      sent += slice;
      if (sent < n) setImmediate(write);
      else {
        const usage = { prompt_tokens: 0, completion_tokens: n, total_tokens: n };
        res.end(
          `data: ${JSON.stringify({ id: "x", object: "text_completion", choices: [], usage })}\n\ndata: [DONE]\n\n`,
        );
      }
    };
    write();
  });
});
server.listen(port, "127.0.0.1", () => console.log(`null server on http://127.0.0.1:${port}`));
