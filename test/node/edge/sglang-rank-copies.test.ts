import { describe, expect, it } from "vitest";
import { readMetrics } from "../../../src/edge/replica-probe";

/**
 * SGLang runs one scheduler per tensor- and pipeline-parallel rank, and the ranks of one data-parallel group hold
 * the same requests (their schedules are kept in step). By default only rank 0 of each group exports its gauges;
 * with `--enable-metrics-for-all-schedulers` every rank exports the same `num_running_reqs` / `num_queue_reqs`
 * under its own `tp_rank` (and `pp_rank`). The router's reading must count each scheduler once: summing the
 * copies read a TP-4 replica with 8 requests as holding 32, and the router passed it over as full.
 */

const NOW = 1_750_000_000_000;
const MODEL = "Qwen/Qwen2.5-7B-Instruct";

interface Rank {
  tp: number;
  pp?: number;
  dp?: number;
  running: number;
  queued: number;
  usage?: number;
}

/** A page as SGLang's scheduler metrics write it: one series per exporting rank, SGLang's label names. */
function sglangPage(ranks: readonly Rank[]): string {
  const labels = (r: Rank) =>
    `model_name="${MODEL}",engine_type="unified",tp_rank="${r.tp}",pp_rank="${r.pp ?? 0}"` +
    (r.dp === undefined ? "" : `,dp_rank="${r.dp}"`);
  const gauge = (name: string, value: (r: Rank) => number) =>
    `# HELP sglang:${name} x\n# TYPE sglang:${name} gauge\n${ranks.map((r) => `sglang:${name}{${labels(r)}} ${value(r)}\n`).join("")}`;
  return (
    gauge("num_running_reqs", (r) => r.running) +
    gauge("num_queue_reqs", (r) => r.queued) +
    gauge("token_usage", (r) => r.usage ?? 0.5)
  );
}

const read = (ranks: readonly Rank[]) => readMetrics("sglang", sglangPage(ranks), { model: MODEL, nowMs: NOW });

describe("readMetrics: SGLang's per-rank copies of one scheduler count once", () => {
  it("reads TP 4 with every scheduler exporting as the one scheduler's queue, not four times it", () => {
    const ranks = [0, 1, 2, 3].map((tp) => ({ tp, running: 5, queued: 3 }));
    expect(read(ranks)).toEqual({ queueLength: 8, tokenUsage: 0.5 });
  });

  it("sums data-parallel groups and counts each group's TP ranks once", () => {
    // DP attention, 2 groups of 2 TP ranks, every scheduler exporting.
    const ranks: Rank[] = [
      { dp: 0, tp: 0, running: 2, queued: 1 },
      { dp: 0, tp: 1, running: 2, queued: 1 },
      { dp: 1, tp: 2, running: 4, queued: 0 },
      { dp: 1, tp: 3, running: 4, queued: 0 },
    ];
    expect(read(ranks)?.queueLength).toBe(7);
  });

  it("reads the default export (rank 0 of each data-parallel group) as before: the groups summed", () => {
    expect(read([{ tp: 0, running: 5, queued: 3 }])?.queueLength).toBe(8);
    const ranks: Rank[] = [
      { dp: 0, tp: 0, running: 2, queued: 1 },
      { dp: 1, tp: 2, running: 4, queued: 6 },
    ];
    expect(read(ranks)?.queueLength).toBe(13);
  });

  it("counts pipeline stages' copies once", () => {
    const ranks = [0, 1].flatMap((pp) => [0, 1].map((tp) => ({ pp, tp, running: 6, queued: 2 })));
    expect(read(ranks)?.queueLength).toBe(8);
  });

  it("takes the largest copy when ranks were scraped between two updates", () => {
    const ranks: Rank[] = [
      { tp: 0, running: 5, queued: 3 },
      { tp: 1, running: 6, queued: 2 },
    ];
    expect(read(ranks)?.queueLength).toBe(9);
  });

  it("still reads a copy that is not a count as unknown, never as idle", () => {
    const ranks: Rank[] = [
      { tp: 0, running: 5, queued: 3 },
      { tp: 1, running: -5, queued: 3 },
    ];
    expect(read(ranks)).toBeUndefined();
  });

  it("counts current SGLang's copies once though each TP rank also carries its own moe_ep_rank", () => {
    // SGLang >= the observability/ layout labels scheduler series with moe_ep_rank too
    // (sgl-project/sglang python/sglang/srt/observability/scheduler_metrics_mixin.py @44cedc2b), and each scheduler
    // process gets moe_ep_rank = tp_rank // (tp_size // ep_size): the TP copies of one scheduler differ in it.
    const page = (ranks: readonly { tp: number; ep: number; running: number; queued: number }[]) => {
      const labels = (r: { tp: number; ep: number }) =>
        `model_name="${MODEL}",engine_type="unified",tp_rank="${r.tp}",pp_rank="0",moe_ep_rank="${r.ep}"`;
      return ["num_running_reqs", "num_queue_reqs"]
        .map(
          (name) =>
            `# TYPE sglang:${name} gauge\n` +
            ranks
              .map((r) => `sglang:${name}{${labels(r)}} ${name === "num_running_reqs" ? r.running : r.queued}\n`)
              .join(""),
        )
        .join("");
    };
    // TP 4, EP 4: every scheduler exporting the same 5 running, 3 waiting.
    const tp4ep4 = [0, 1, 2, 3].map((tp) => ({ tp, ep: tp, running: 5, queued: 3 }));
    expect(readMetrics("sglang", page(tp4ep4), { model: MODEL, nowMs: NOW })?.queueLength).toBe(8);
    // TP 4, EP 2: moe_ep_rank 0, 0, 1, 1.
    const tp4ep2 = [0, 1, 2, 3].map((tp) => ({ tp, ep: tp >> 1, running: 5, queued: 3 }));
    expect(readMetrics("sglang", page(tp4ep2), { model: MODEL, nowMs: NOW })?.queueLength).toBe(8);
  });

  it("leaves vLLM's data-parallel engines summed", () => {
    const page =
      'vllm:num_requests_running{engine="0",model_name="m"} 2\nvllm:num_requests_running{engine="1",model_name="m"} 2\n' +
      'vllm:num_requests_waiting{engine="0",model_name="m"} 1\nvllm:num_requests_waiting{engine="1",model_name="m"} 1\n';
    expect(readMetrics("vllm", page, { nowMs: NOW })?.queueLength).toBe(6);
  });
});
