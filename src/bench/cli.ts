import { parseArgs } from "node:util";
import { z } from "zod";
import { type BenchOptions, defaultBenchOptions } from "./run-benchmark";

/**
 * How the command is called: `--help`'s first line, and the line after a refused command line's message.
 *
 * @example
 * ```ts
 * console.error(`bench: ${error.message}\nusage: ${BENCH_USAGE} (see --help)`);
 * ```
 */
export const BENCH_USAGE = "npm run bench -- [flags]";

const HELP = `Usage: ${BENCH_USAGE}

A bench_serving-compatible load client (streaming POST /v1/completions, dataset "random").

  --base-url <url>            Server to load, e.g. http://127.0.0.1:8001 (required)
  --model <name>              Model name (default: the first of GET /v1/models)
  --num-prompts <n>           Requests to send (default 1000)
  --max-concurrency <n>       Most requests in flight (default: unbounded)
  --request-rate <r>          Requests/s with Poisson arrivals; inf sends all at once (default inf)
  --dataset-name random       The only dataset (default random)
  --random-input-len <n>      Prompt length in tokens (default 1024)
  --random-output-len <n>     max_tokens per request (default 1024)
  --random-range-ratio <f>    Lengths are drawn from [len * f, len] (default 0)
  --random-prompt-format <f>  ids (token-id prompts, exact lengths) or text (random words) (default ids)
  --disable-ignore-eos        Let requests stop at the model's EOS (ignore_eos is on by default)
  --seed <n>                  Seed of prompts, lengths and arrivals (default 1)
  --warmup-requests <n>       Warm-up requests (the first prompt, at most 32 tokens) sent and awaited before
                              the run, not counted (default 1; 0 skips the warm-up)
  --output-file <path>        Write the results (summary and per-request data) as JSON
  --honor-retry-after         On 429/503 wait retry-after-ms (else Retry-After) and retry
  --max-retries <n>           Retries per request with --honor-retry-after (default 10)
  --help                      Print this help`;

const schema = z.object({
  baseUrl: z.url({ message: "--base-url: expected an http(s) URL" }),
  model: z.string().min(1).optional(),
  numPrompts: z.int().min(1),
  maxConcurrency: z.int().min(1).nullable(),
  requestRate: z.number().positive().or(z.literal(Number.POSITIVE_INFINITY)),
  randomInputLen: z.int().min(1),
  randomOutputLen: z.int().min(1),
  randomRangeRatio: z.number().min(0).max(1),
  ignoreEos: z.boolean(),
  seed: z.int(),
  promptFormat: z.enum(["ids", "text"]),
  honorRetryAfter: z.boolean(),
  maxRetries: z.int().min(0),
  warmupRequests: z.int().min(0),
});

/** Parsed bench arguments: run options plus the output file. */
export interface BenchCliOptions extends BenchOptions {
  outputFile?: string;
}

/**
 * Parses `npm run bench` arguments (bench_serving's names). Returns `"help"` for `--help`; throws an
 * Error whose message names the flag.
 *
 * @example
 * ```ts
 * parseBenchArgs(["--base-url", "http://127.0.0.1:8001", "--num-prompts", "32"]);
 * ```
 */
export function parseBenchArgs(argv: string[]): BenchCliOptions | "help" {
  const str = { type: "string" } as const;
  const bool = { type: "boolean" } as const;
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      help: bool,
      "base-url": str,
      model: str,
      "num-prompts": str,
      "max-concurrency": str,
      "request-rate": str,
      "dataset-name": str,
      "random-input-len": str,
      "random-output-len": str,
      "random-range-ratio": str,
      "random-prompt-format": str,
      "disable-ignore-eos": bool,
      seed: str,
      "output-file": str,
      "honor-retry-after": bool,
      "max-retries": str,
      "warmup-requests": str,
    },
  });
  if (values.help) return "help";
  if (values["dataset-name"] !== undefined && values["dataset-name"] !== "random")
    throw new Error(`--dataset-name: only "random" is supported, got '${values["dataset-name"]}'`);
  const num = (flag: keyof typeof values, fallback: number | null) => {
    const raw = values[flag];
    if (raw === undefined) return fallback;
    const s = String(raw).trim();
    const v = /^\+?inf(inity)?$/i.test(s) ? Number.POSITIVE_INFINITY : Number(s);
    if (s === "" || Number.isNaN(v)) throw new Error(`--${flag}: expected a number, got '${raw}'`);
    return v;
  };
  const d = defaultBenchOptions;
  const input = {
    baseUrl: values["base-url"],
    model: values.model,
    numPrompts: num("num-prompts", d.numPrompts),
    maxConcurrency: num("max-concurrency", d.maxConcurrency),
    requestRate: num("request-rate", d.requestRate),
    randomInputLen: num("random-input-len", d.randomInputLen),
    randomOutputLen: num("random-output-len", d.randomOutputLen),
    randomRangeRatio: num("random-range-ratio", d.randomRangeRatio),
    ignoreEos: !values["disable-ignore-eos"],
    seed: num("seed", d.seed),
    promptFormat: values["random-prompt-format"] ?? d.promptFormat,
    honorRetryAfter: values["honor-retry-after"] ?? false,
    maxRetries: num("max-retries", d.maxRetries),
    warmupRequests: num("warmup-requests", d.warmupRequests ?? 1),
  };
  if (input.baseUrl === undefined) throw new Error("--base-url is required, e.g. --base-url http://127.0.0.1:8001");
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new Error(
      result.error.issues
        .map((i) => {
          const key = String(i.path[0] ?? "");
          const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
          return i.message.startsWith("--") ? i.message : `--${flag}: ${i.message}`;
        })
        .join("\n"),
    );
  }
  return { ...result.data, model: result.data.model, outputFile: values["output-file"] };
}

/** The `--help` text. */
export const benchHelp = HELP;
