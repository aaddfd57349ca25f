import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeBackend } from "../../../src/bench/fake-openai-backends";
import { replicaLoad } from "../../../src/edge/replica-load";
import {
  PROBE_PAGE_MAX_BYTES,
  type ProbeResult,
  probeReplica,
  probeReplicaWithReason,
  type ReplicaTarget,
  replicaProber,
} from "../../../src/edge/replica-probe";
import { PROBE_LOG_QUIET_MS, PROBE_LOG_TIMEOUTS_FOR_DOWN, ReplicaProbeLog } from "../../../src/edge/replica-probe-log";

/**
 * The router's probe log (`spillway.replica_down` / `spillway.replica_recovered`): one line per change of a
 * replica's probe state, with the reason read from the probe, never one per probe.
 */

/** What the one replica on loopback answers, set by each test. */
type Mode = "sglang" | "vllm" | "401" | "reset" | "slow" | "garbage" | "huge";

describe("probe failures on loopback, with their reasons", () => {
  let server: Server;
  let url: string;
  let mode: Mode = "sglang";
  const sglang = createFakeBackend("sglang", { model: "m" });
  const vllm = createFakeBackend("vllm", { model: "m" });
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (mode === "401") {
        res.writeHead(401, { "content-type": "application/json" });
        res.end('{"error":"Unauthorized"}');
      } else if (mode === "reset") req.socket.destroy();
      else if (mode === "slow") setTimeout(() => res.end(), 2_000);
      else if (mode === "garbage") res.end("<html>not metrics</html>\n");
      else if (mode === "huge") {
        // A readable page made 5 MiB long: vLLM's gauges then comment lines; for /load, JSON with a long field.
        const pad = "#".repeat(1023);
        if (path === "/load") res.write('{"queueLength":0,"pad":"');
        else res.write("vllm:num_requests_running 0\nvllm:num_requests_waiting 0\n");
        for (let i = 0; i < 5 * 1024; i++) res.write(path === "/load" ? `${pad}#` : `${pad}\n`);
        res.end(path === "/load" ? '"}' : "");
      } else void (mode === "sglang" ? sglang : vllm).handle(req, res, path);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("reads no page past PROBE_PAGE_MAX_BYTES: a 5 MiB page is unreadable, whole as it is (router and dashboard)", async () => {
    mode = "huge";
    // Before: read whole, and a count (0) for both.
    for (const load of ["vllm", "spillway"] as const) {
      const result = await probeReplicaWithReason({ url, load }, 5_000, {});
      expect(result, load).toEqual({ answer: undefined, failure: expect.objectContaining({ reason: "unreadable" }) });
      expect("failure" in result && result.failure.detail, load).toBe(
        `GET ${load === "vllm" ? "/metrics" : "/load"} answered more than ${PROBE_PAGE_MAX_BYTES} bytes, not read: is the replica's URL right?`,
      );
    }
    const dashboard = await replicaLoad({ url, load: "spillway" }, undefined, 5_000);
    expect(dashboard).toMatchObject({ ok: false, queueLength: null, tokenUsage: null });
    expect(dashboard.error).toMatch(/answered more than 4194304 bytes/);
    mode = "vllm";
  });

  it("says why, and answers what probeReplica answers", async () => {
    const target: ReplicaTarget = { url, load: "vllm" };
    const cases: [Mode, unknown, RegExp][] = [
      ["sglang", { reason: "unreadable" }, /no vllm:num_requests_running sample; the page has sglang's gauges/],
      ["401", { reason: "status", status: 401 }, /GET \/metrics answered 401 \(the deployment's upstream key/],
      ["reset", { reason: "unreachable" }, /GET \/metrics failed: /],
      ["garbage", { reason: "unreadable" }, /GET \/metrics (is not Prometheus text|has no vllm:num_requests_running)/],
    ];
    for (const [set, failure, detail] of cases) {
      mode = set;
      const result = await probeReplicaWithReason(target, 1_000, {});
      expect(result, set).toEqual({ answer: undefined, failure: expect.objectContaining(failure) });
      expect("failure" in result && result.failure.detail, set).toMatch(detail);
      expect(await probeReplica(target, 1_000, {}), set).toBe(result.answer);
    }
    mode = "slow";
    expect(await probeReplicaWithReason(target, 50, {})).toEqual({
      answer: "timeout",
      failure: { reason: "timeout", detail: "GET /metrics: no answer within 50 ms" },
    });
    mode = "vllm";
    expect(await probeReplicaWithReason(target, 1_000, {})).toEqual({ answer: 0 });
    expect(await probeReplicaWithReason({ url, load: "spillway" }, 1_000, {})).toEqual({
      answer: undefined,
      failure: expect.objectContaining({ reason: "status", status: 404 }),
    });
    // A replica configured with the base URL an OpenAI client takes: the detail names the path fetched. Before, it
    // said "GET /metrics answered 404", which that server does serve.
    expect(await probeReplicaWithReason({ url: `${url}/v1`, load: "vllm" }, 1_000, {})).toEqual({
      answer: undefined,
      failure: {
        reason: "status",
        status: 404,
        detail: "GET /v1/metrics answered 404 (a wrong URL, or a wrong load source?)",
      },
    });
  });

  it("a replica configured with the wrong load source: one down line with the reason, however often it is probed; one recovered line when it answers", async () => {
    let nowMs = 0;
    const lines: string[] = [];
    const log = new ReplicaProbeLog(
      { deployment: "llama", shard: 2 },
      () => nowMs,
      (line) => lines.push(line),
    );
    // An SGLang server configured as vLLM: the router's own prober, with the log observing it.
    const probe = replicaProber([{ url, load: "vllm" }], {}, (target, result) => log.observe(target, result));
    mode = "sglang";
    for (let i = 0; i < 20; i++, nowMs += 5_000) expect(await probe(url, 1_000)).toBeUndefined();
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        event: "spillway.replica_down",
        deployment: "llama",
        shard: 2,
        replica: url,
        load: "vllm",
        reason: "unreadable",
        detail: expect.stringMatching(/sglang's gauges \(sglang:num_running_reqs, sglang:num_queue_reqs\)/),
      },
    ]);
    mode = "vllm"; // it answers as its configuration says
    for (let i = 0; i < 5; i++, nowMs += 5_000) expect(await probe(url, 1_000)).toBe(0);
    expect(lines.slice(1).map((line) => JSON.parse(line))).toEqual([
      {
        event: "spillway.replica_recovered",
        deployment: "llama",
        shard: 2,
        replica: url,
        load: "vllm",
        queueLength: 0,
        downS: 100,
      },
    ]);
  });
});

describe("ReplicaProbeLog: at most one line per change, and a flapping replica cannot flood it", () => {
  const target: ReplicaTarget = { url: "http://10.0.0.5:8000", load: "sglang" };
  const down: ProbeResult = { answer: undefined, failure: { reason: "unreachable", detail: "refused" } };
  const slow: ProbeResult = { answer: "timeout", failure: { reason: "timeout", detail: "no answer within 250 ms" } };
  const up: ProbeResult = { answer: 3 };
  function logWith() {
    const clock = { nowMs: 0 };
    const lines: Record<string, unknown>[] = [];
    const log = new ReplicaProbeLog(
      { deployment: "d", shard: 0 },
      () => clock.nowMs,
      (l) => lines.push(JSON.parse(l)),
    );
    return { clock, lines, log };
  }

  it("a replica that starts up and stays up writes nothing; timeouts in a row are a down line with their reason", () => {
    const { clock, lines, log } = logWith();
    for (let i = 0; i < 100; i++, clock.nowMs += 100) log.observe(target, up);
    expect(lines).toEqual([]);
    for (let i = 0; i < PROBE_LOG_TIMEOUTS_FOR_DOWN; i++) log.observe(target, slow);
    log.observe(target, down); // still failing, another reason: no new line
    expect(lines).toEqual([expect.objectContaining({ event: "spillway.replica_down", reason: "timeout" })]);
  });

  // Before: both lines carried the URL as configured, the gateway's key and the user's password with it.
  it("names a replica whose URL carries credentials with them redacted (`user:pass@`, `?key=`)", () => {
    const { clock, lines, log } = logWith();
    const keyed: ReplicaTarget = { url: "http://gw:pw-probe@10.0.0.6:8000/llama?key=sk-probe", load: "vllm" };
    log.observe(keyed, down);
    clock.nowMs += PROBE_LOG_QUIET_MS;
    log.observe(keyed, up);
    expect(lines).toEqual([
      expect.objectContaining({ event: "spillway.replica_down", replica: "http://10.0.0.6:8000/llama?key=redacted" }),
      expect.objectContaining({
        event: "spillway.replica_recovered",
        replica: "http://10.0.0.6:8000/llama?key=redacted",
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/pw-probe|sk-probe/);
  });

  it("a busy replica whose probes miss their deadline now and then is slow, not down: no line", () => {
    const { clock, lines, log } = logWith();
    // Every other probe, and two in a row: fewer than PROBE_LOG_TIMEOUTS_FOR_DOWN consecutive misses.
    for (let i = 0; i < 1000; i++, clock.nowMs += 100) log.observe(target, i % 3 === 2 ? up : slow);
    expect(lines).toEqual([]);
    // A real failure is still logged at once.
    log.observe(target, down);
    expect(lines).toEqual([expect.objectContaining({ event: "spillway.replica_down", reason: "unreachable" })]);
  });

  it("flapping on every probe: one line per quiet period, counting the changes held", () => {
    const { clock, lines, log } = logWith();
    const minutes = 10;
    for (let i = 0; clock.nowMs < minutes * 60_000; i++, clock.nowMs += 100) log.observe(target, i % 2 ? up : down);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.length).toBeLessThanOrEqual((minutes * 60_000) / PROBE_LOG_QUIET_MS + 1);
    expect(lines.slice(1).every((line) => (line.changes as number) > 1)).toBe(true);
  });

  it("a recovery inside the quiet period is logged by the first probe after it, and a short blip not at all", () => {
    const { clock, lines, log } = logWith();
    log.observe(target, down);
    clock.nowMs = 5_000;
    log.observe(target, up);
    expect(lines).toHaveLength(1);
    clock.nowMs = PROBE_LOG_QUIET_MS;
    log.observe(target, up);
    expect(lines[1]).toEqual(expect.objectContaining({ event: "spillway.replica_recovered", downS: 30 }));
    expect(lines[1]).not.toHaveProperty("changes");
    // Down and back between two probes of the quiet period: its state at the period's end is what it was.
    clock.nowMs += 1_000;
    log.observe(target, down);
    clock.nowMs += 1_000;
    log.observe(target, up);
    clock.nowMs += PROBE_LOG_QUIET_MS;
    log.observe(target, up);
    expect(lines).toHaveLength(2);
  });
});
