import type { BenchPrompt } from "./dataset";
import type { RequestOutcome } from "./request-outcome";
import { retryDelayMs } from "./retry-after";
import { sseData } from "./sse";

/** How the client sends each request. */
export interface SendOptions {
  baseUrl: string;
  model: string;
  ignoreEos: boolean;
  /** Wait out `retry-after-ms` / `Retry-After` on 429 and 503 and try again. */
  honorRetryAfter: boolean;
  maxRetries: number;
}

/**
 * Sends one streaming `POST /v1/completions` (as bench_serving's sglang-oai backend does) and measures
 * TTFT, the gaps between content chunks and end-to-end latency, all from the first attempt. With
 * `honorRetryAfter`, a 429/503 answer is retried after the server's hint (counted in `retries`).
 *
 * @example
 * ```ts
 * const outcome = await sendRequest({ prompt: "hi", promptLen: 1, outputLen: 8 },
 *   { baseUrl: "http://127.0.0.1:8001", model: "demo-model", ignoreEos: true, honorRetryAfter: false, maxRetries: 0 });
 * ```
 */
export async function sendRequest(prompt: BenchPrompt, options: SendOptions): Promise<RequestOutcome> {
  const outcome: RequestOutcome = {
    success: false,
    promptLen: prompt.promptLen,
    outputLen: 0,
    ttft: 0,
    itl: [],
    latency: 0,
    retries: 0,
    error: "",
    text: "",
  };
  const body = JSON.stringify({
    model: options.model,
    prompt: prompt.prompt,
    max_tokens: prompt.outputLen,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: options.ignoreEos,
  });
  const url = `${options.baseUrl.replace(/\/$/, "")}/v1/completions`;
  const start = performance.now();
  try {
    let res: Response;
    for (;;) {
      // Like the OpenAI SDKs, number the retries (`x-stainless-retry-count`), so the router can tell them apart.
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (outcome.retries > 0) headers["x-stainless-retry-count"] = String(outcome.retries);
      res = await fetch(url, { method: "POST", headers, body });
      if (
        (res.status === 429 || res.status === 503) &&
        options.honorRetryAfter &&
        outcome.retries < options.maxRetries
      ) {
        const delay = retryDelayMs(res.headers);
        if (delay !== null) {
          await res.body?.cancel();
          outcome.retries += 1;
          await new Promise((resolve) => setTimeout(resolve, delay));
          continue;
        }
      }
      break;
    }
    if (!res.ok || !res.body) {
      outcome.error = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`;
      outcome.latency = (performance.now() - start) / 1000;
      return outcome;
    }
    let last = start;
    let chunks = 0;
    let usageTokens: number | null = null;
    for await (const data of sseData(res.body)) {
      if (data === "[DONE]") break;
      const event = JSON.parse(data) as {
        error?: { message?: string };
        choices?: { text?: string }[];
        usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
      };
      if (event.error) {
        // `||`, not `??`: an empty message must still mark the request failed (success is "no error recorded").
        outcome.error = event.error.message || "stream error";
        break;
      }
      const text = event.choices?.[0]?.text ?? "";
      if (text !== "") {
        const now = performance.now();
        if (chunks === 0) outcome.ttft = (now - start) / 1000;
        else outcome.itl.push((now - last) / 1000);
        last = now;
        chunks += 1;
        outcome.text += text;
      }
      if (event.usage) {
        usageTokens = event.usage.completion_tokens ?? null;
        if (event.usage.prompt_tokens !== undefined) outcome.promptLen = event.usage.prompt_tokens;
      }
    }
    outcome.latency = (performance.now() - start) / 1000;
    outcome.outputLen = usageTokens ?? chunks;
    outcome.success = outcome.error === "";
  } catch (error) {
    outcome.error = String(error);
    outcome.latency = (performance.now() - start) / 1000;
  }
  return outcome;
}
