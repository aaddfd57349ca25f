import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BackendKind, startFakeBackend } from "../../../src/bench/fake-openai-backends";
import { probeReplica, readMetrics } from "../../../src/edge/replica-probe";

type Started = Awaited<ReturnType<typeof startFakeBackend>>;

/** Holds `count` requests inside a fake backend until `POST /__release`, without waiting for them. */
function occupy(url: string, count: number): Promise<unknown> {
  return Promise.all(
    Array.from({ length: count }, () =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer k" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hold" }] }),
      }).then((r) => r.arrayBuffer()),
    ),
  );
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 4000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe("probeReplica against fake vLLM, SGLang and TGI servers", () => {
  const servers: Partial<Record<BackendKind | "legacy", Started>> = {};
  beforeAll(async () => {
    servers.vllm = await startFakeBackend("vllm", { model: "m", maxRunning: 2, engines: 2, apiKey: "k" });
    servers.legacy = await startFakeBackend("vllm", { model: "m", maxRunning: 2, legacyCacheGauge: true });
    servers.sglang = await startFakeBackend("sglang", { model: "m", maxRunning: 2, apiKey: "k" });
    servers.tgi = await startFakeBackend("tgi", { maxRunning: 2, apiKey: "k" });
  });
  afterAll(async () => {
    await Promise.all(Object.values(servers).map((s) => s?.close()));
  });

  it.each(["vllm", "legacy", "sglang", "tgi"] as const)(
    "%s: the queue length is running + waiting, summed over label sets",
    async (name) => {
      const server = servers[name] as Started;
      const load = name === "legacy" ? "vllm" : name;
      expect(await probeReplica({ url: server.url, load }, 1000, {})).toBe(0);
      const held = occupy(server.url, 5);
      await until(() => server.backend.state.inflight === 5);
      // 2 running, 3 waiting (over two engines for vLLM): the router must see all five.
      expect(await probeReplica({ url: server.url, load }, 1000, {})).toBe(5);
      await fetch(`${server.url}/__release`, { method: "POST" });
      await held;
      expect(await probeReplica({ url: server.url, load }, 1000, {})).toBe(0);
    },
  );

  it("counts only the configured model's samples; an absent model is unknown", async () => {
    const server = servers.vllm as Started;
    expect(await probeReplica({ url: server.url, load: "vllm", model: "m" }, 1000, {})).toBe(0);
    expect(await probeReplica({ url: server.url, load: "vllm", model: "other" }, 1000, {})).toBeUndefined();
  });

  it("a replica without /metrics, or spillway's /load against a vLLM server, reads as unknown", async () => {
    const server = servers.vllm as Started;
    expect(await probeReplica({ url: server.url, load: "spillway" }, 1000, {})).toBeUndefined();
    expect(await probeReplica({ url: `${server.url}/nowhere`, load: "tgi" }, 1000, {})).toBeUndefined();
  });

  it("sends the upstream API key with the probe", async () => {
    const server = servers.sglang as Started;
    let seen: string | undefined;
    const spy = createServer((req, res) => {
      seen = req.headers.authorization;
      res.end("sglang:num_running_reqs 0\nsglang:num_queue_reqs 0\n");
    });
    await new Promise<void>((resolve) => spy.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
    expect(await probeReplica({ url, load: "sglang" }, 1000, { upstreamApiKey: "k" })).toBe(0);
    expect(seen).toBe("Bearer k");
    await new Promise((r) => spy.close(r));
    expect(server.backend.state.unauthorized).toBe(0);
  });

  it("follows no redirect: the upstream key and the signature never reach its Location, and the replica reads as unknown", async () => {
    const elsewhere: string[] = [];
    const target = createServer((req, res) => {
      elsewhere.push(req.headers.authorization ?? "");
      res.end(JSON.stringify({ queueLength: 3 }));
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const redirecting = createServer((req, res) => {
      res.writeHead(307, { location: `${targetUrl}${req.url}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
    try {
      const credentials = { upstreamApiKey: "k", signingSecret: "s" };
      expect(await probeReplica({ url, load: "spillway" }, 1000, credentials)).toBeUndefined();
      expect(elsewhere).toEqual([]);
      // The target itself answers: the test's redirect would have been followed to a real count.
      expect(await probeReplica({ url: targetUrl, load: "spillway" }, 1000, {})).toBe(3);
    } finally {
      await Promise.all([target, redirecting].map((s) => new Promise((r) => s.close(r))));
    }
  });

  describe("a malformed, partial, stale or slow page is unknown, never empty", () => {
    let server: Server;
    let url = "";
    const pages: Record<string, { body: string; headers?: Record<string, string>; delayMs?: number }> = {
      "/cut/metrics": { body: "vllm:num_requests_running 0\nvllm:num_requests_wai" },
      "/partial/metrics": { body: "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0.0\n" },
      "/html/metrics": { body: "<html>upstream down</html>\n" },
      "/negative/metrics": { body: "tgi_queue_size -1\ntgi_batch_current_size 0\n" },
      "/nan/metrics": { body: "tgi_queue_size NaN\ntgi_batch_current_size 0\n" },
      "/cached/metrics": { body: "tgi_queue_size 0\ntgi_batch_current_size 0\n", headers: { age: "60" } },
      "/old/metrics": { body: "tgi_queue_size 0 1000\ntgi_batch_current_size 0 1000\n" },
      "/slow/metrics": { body: "tgi_queue_size 0\ntgi_batch_current_size 0\n", delayMs: 500 },
    };
    beforeAll(async () => {
      server = createServer((req, res) => {
        const page = pages[req.url ?? ""];
        if (!page) return void res.writeHead(404).end();
        setTimeout(() => res.writeHead(200, page.headers).end(page.body), page.delayMs ?? 0);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it.each([
      ["cut", "vllm"],
      ["partial", "vllm"],
      ["html", "vllm"],
      ["negative", "tgi"],
      ["nan", "tgi"],
      ["cached", "tgi"],
      ["old", "tgi"],
    ] as const)("%s page: unknown", async (path, load) => {
      expect(await probeReplica({ url: `${url}/${path}`, load }, 2000, {})).toBeUndefined();
    });

    it("a page slower than the deadline reads as timeout", async () => {
      expect(await probeReplica({ url: `${url}/slow`, load: "tgi" }, 50, {})).toBe("timeout");
    });
  });

  it("a load: none replica is never probed", async () => {
    await expect(probeReplica({ url: "http://127.0.0.1:1", load: "none" }, 100, {})).rejects.toThrow(/never probed/);
  });
});

describe("readMetrics", () => {
  it("reads token usage as the mean over engines, preferring the new vLLM gauge", () => {
    const page = [
      'vllm:num_requests_running{engine="0"} 1.0',
      'vllm:num_requests_running{engine="1"} 1.0',
      'vllm:num_requests_waiting{engine="0"} 0.0',
      'vllm:num_requests_waiting{engine="1"} 2.0',
      'vllm:kv_cache_usage_perc{engine="0"} 0.2',
      'vllm:kv_cache_usage_perc{engine="1"} 0.6',
      'vllm:gpu_cache_usage_perc{engine="0"} 0.9',
      "",
    ].join("\n");
    const reading = readMetrics("vllm", page, { nowMs: 0 });
    expect(reading?.queueLength).toBe(4);
    expect(reading?.tokenUsage).toBeCloseTo(0.4);
  });

  it("keeps fresh timestamps and drops old ones", () => {
    const page = "tgi_queue_size 1 10000\ntgi_batch_current_size 2 10000\n";
    expect(readMetrics("tgi", page, { nowMs: 15_000 })).toEqual({ queueLength: 3, tokenUsage: null });
    expect(readMetrics("tgi", page, { nowMs: 25_000 })).toBeUndefined();
  });
});
