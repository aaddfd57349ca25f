/**
 * `npm run bench -- --base-url http://127.0.0.1:8001 --num-prompts 32 --max-concurrency 16 ...`:
 * runs a benchmark and prints bench_serving's result block (see `--help`).
 */
import { writeFile } from "node:fs/promises";
import { formatResult } from "./bench-result";
import { BENCH_USAGE, benchHelp, parseBenchArgs } from "./cli";
import { runBenchmark } from "./run-benchmark";

let options: ReturnType<typeof parseBenchArgs>;
try {
  options = parseBenchArgs(process.argv.slice(2));
} catch (error) {
  console.error(`bench: ${(error as Error).message}\nusage: ${BENCH_USAGE} (see --help)`);
  process.exit(2);
}
if (options === "help") {
  console.log(benchHelp);
  process.exit(0);
}

const run = await runBenchmark(options);
console.log(formatResult(run.result));
if (run.result.failed > 0) {
  const first = run.outcomes.find((o) => !o.success);
  console.log(`Failed requests: ${run.result.failed} (first error: ${first?.error})`);
}
if (run.result.retries > 0) console.log(`Retries after 429/503: ${run.result.retries}`);
if (options.outputFile) {
  const { result, outcomes } = run;
  await writeFile(
    options.outputFile,
    `${JSON.stringify(
      {
        ...result,
        requestRate: Number.isFinite(result.requestRate) ? result.requestRate : "inf",
        dataset_name: "random",
        model: run.model,
        input_lens: outcomes.map((o) => o.promptLen),
        output_lens: outcomes.map((o) => o.outputLen),
        ttfts: outcomes.map((o) => o.ttft),
        itls: outcomes.map((o) => o.itl),
        latencies: outcomes.map((o) => o.latency),
        retries_per_request: outcomes.map((o) => o.retries),
        errors: outcomes.map((o) => o.error),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results written to ${options.outputFile}`);
}
