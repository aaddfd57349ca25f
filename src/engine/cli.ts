import { parseArgs } from "node:util";
import { type EngineOptions, type EngineOptionsInput, engineOptionsSchema } from "./options";
import { optionIssueLines } from "./options-error";

type Kind = "int" | "number" | "string" | "bool";
interface Flag {
  flag: string;
  key: keyof EngineOptionsInput;
  kind: Kind;
  help: string;
}

// SGLang's flag names where the concept is the same; the simulated-GPU flags are ours.
const FLAGS: Flag[] = [
  { flag: "host", key: "host", kind: "string", help: "Address to listen on (default 127.0.0.1)." },
  { flag: "port", key: "port", kind: "int", help: "Port to listen on, 0 for any free port (default 8001)." },
  {
    flag: "served-model-name",
    key: "servedModelName",
    kind: "string",
    help: "Model name the API serves and /v1/models lists (default demo-model).",
  },
  { flag: "name", key: "name", kind: "string", help: "Replica name reported as served_by (default engine-<port>)." },
  { flag: "max-total-tokens", key: "maxTotalTokens", kind: "int", help: "KV pool size in tokens (default 32768)." },
  {
    flag: "max-running-requests",
    key: "maxRunningRequests",
    kind: "int",
    help: "Most requests decoding at once (default min(max-total-tokens/2, 4096); --engine llama: 8 sequences).",
  },
  {
    flag: "max-queued-requests",
    key: "maxQueuedRequests",
    kind: "int",
    help: "Most requests waiting to run; one more is refused with 503 (default: no limit).",
  },
  {
    flag: "max-prefill-tokens",
    key: "maxPrefillTokens",
    kind: "int",
    help: "Token budget of one prefill batch (default 16384).",
  },
  {
    flag: "chunked-prefill-size",
    key: "chunkedPrefillSize",
    kind: "int",
    help: "Prefill long prompts in chunks of this many tokens; -1 disables (default 8192).",
  },
  {
    flag: "schedule-conservativeness",
    key: "scheduleConservativeness",
    kind: "number",
    help: "Scales the initial new-token ratio (default 1.0).",
  },
  {
    flag: "schedule-policy",
    key: "schedulePolicy",
    kind: "string",
    help: "Waiting-queue order: fcfs, lpm, lof or random (default fcfs).",
  },
  { flag: "disable-radix-cache", key: "disableRadixCache", kind: "bool", help: "Turn off the prefix (radix) cache." },
  {
    flag: "protect-load-metrics",
    key: "protectLoadMetrics",
    kind: "bool",
    help: "With SPILLWAY_SIGNING_SECRET set, require the edge's signature on /load and /metrics too.",
  },
  {
    flag: "signature-window-s",
    key: "signatureWindowS",
    kind: "number",
    help: "Accepted clock skew of an edge signature, seconds (default 30).",
  },
  {
    flag: "deployment",
    key: "deployment",
    kind: "string",
    help: "With SPILLWAY_SIGNING_SECRET set, serve only requests the edge signed for this deployment (a,b for several; default any).",
  },
  { flag: "page-size", key: "pageSize", kind: "int", help: "KV page size in tokens (default 1)." },
  {
    flag: "context-length",
    key: "contextLength",
    kind: "int",
    help: "Longest prompt + max_tokens accepted (default max-total-tokens; --engine llama: the model's context_length, at most max-total-tokens).",
  },
  {
    flag: "log-level",
    key: "logLevel",
    kind: "string",
    help: "debug, info, warning, error or critical (default info).",
  },
  {
    flag: "decode-log-interval",
    key: "decodeLogInterval",
    kind: "int",
    help: "Log a decode batch line every N decode steps (default 40).",
  },
  {
    flag: "random-seed",
    key: "randomSeed",
    kind: "int",
    help: "Seed of the output-length model and random policy (default 0).",
  },
  {
    flag: "engine",
    key: "engine",
    kind: "string",
    help: "simulated (a simulated GPU, the default) or llama (llama.cpp; needs --model-path).",
  },
  { flag: "model-path", key: "modelPath", kind: "string", help: "--engine llama: the GGUF model file." },
  {
    flag: "gpu",
    key: "gpu",
    kind: "string",
    help: "--engine llama: cpu (default) or cuda (fails if the CUDA build cannot load; no CPU fallback).",
  },
  {
    flag: "threads",
    key: "threads",
    kind: "int",
    help: "--engine llama: CPU threads of llama.cpp (default: cores - 1, at least 1).",
  },
  {
    flag: "speed",
    key: "speed",
    kind: "number",
    help: "Speed factor: step times are divided by it; inf = zero-cost steps (default 1).",
  },
  {
    flag: "prefill-throughput",
    key: "prefillThroughput",
    kind: "number",
    help: "Simulated prefill throughput, tokens/s (default 3900).",
  },
  {
    flag: "prefill-overhead-ms",
    key: "prefillOverheadMs",
    kind: "number",
    help: "Simulated fixed cost of a prefill batch, ms (default 5).",
  },
  {
    flag: "decode-base-ms",
    key: "decodeBaseMs",
    kind: "number",
    help: "Simulated fixed cost of a decode step, ms (default 20).",
  },
  {
    flag: "decode-per-req-ms",
    key: "decodePerReqMs",
    kind: "number",
    help: "Simulated decode cost per running request, ms (default 0.5).",
  },
  {
    flag: "decode-per-ktoken-ms",
    key: "decodePerKTokenMs",
    kind: "number",
    help: "Simulated decode cost per 1000 tokens in the batch, ms (default 0.6).",
  },
  {
    flag: "eos-distribution",
    key: "eosDistribution",
    kind: "string",
    help: "When requests without ignore_eos stop: uniform, exponential or never (default uniform).",
  },
  {
    flag: "eos-min-fraction",
    key: "eosMinFraction",
    kind: "number",
    help: "uniform: earliest EOS as a fraction of max_tokens (default 0.05).",
  },
  {
    flag: "eos-max-fraction",
    key: "eosMaxFraction",
    kind: "number",
    help: "uniform: latest EOS as a fraction of max_tokens (default 0.6).",
  },
  {
    flag: "eos-mean-tokens",
    key: "eosMeanTokens",
    kind: "number",
    help: "exponential: mean output length in tokens (default 128).",
  },
  {
    flag: "max-body-bytes",
    key: "maxBodyBytes",
    kind: "int",
    help: "Largest request body accepted, bytes (default 16777216, as the edge's maxBodyBytes).",
  },
  { flag: "disable-access-log", key: "accessLog", kind: "bool", help: "Do not print one access line per request." },
];

// SGLang's environment variables for the admission constants.
const ENV_VARS: { name: string; key: keyof EngineOptionsInput; help: string }[] = [
  {
    name: "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION",
    key: "clipMaxNewTokensEstimation",
    help: "clip of max_new_tokens in admission (4096)",
  },
  {
    name: "SGLANG_INIT_NEW_TOKEN_RATIO",
    key: "initNewTokenRatio",
    help: "initial new-token ratio before conservativeness (0.7)",
  },
  {
    name: "SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR",
    key: "minNewTokenRatioFactor",
    help: "min ratio = init * factor (0.14)",
  },
  {
    name: "SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS",
    key: "newTokenRatioDecaySteps",
    help: "decode steps from init to min (600)",
  },
  {
    name: "SGLANG_RETRACT_DECODE_STEPS",
    key: "retractDecodeSteps",
    help: "steps of headroom in the post-retraction ratio (20)",
  },
];

/**
 * How the command is called (the spillway-engine package's command, or the repository's script): `--help`'s first
 * line, and the line after a refused command line's message.
 *
 * @example
 * ```ts
 * console.error(`engine: ${error.message}\nusage: ${ENGINE_USAGE} (see --help)`);
 * ```
 */
export const ENGINE_USAGE = "spillway-engine [flags]   (in the repository: npm run engine -- [flags])";

/** The `--help` text: every flag and environment variable. */
export function engineHelp(): string {
  const width = Math.max(...FLAGS.map((f) => f.flag.length + (f.kind === "bool" ? 0 : 8))) + 4;
  const lines = FLAGS.map((f) => `  ${`--${f.flag}${f.kind === "bool" ? "" : " <value>"}`.padEnd(width)}${f.help}`);
  const env = ENV_VARS.map((e) => `  ${e.name.padEnd(40)}${e.help}`);
  return [
    // The same text serves the repository's script and the spillway-engine package's command.
    `Usage: ${ENGINE_USAGE}`,
    "",
    "Starts one engine server (simulated GPU, or llama.cpp with --engine llama) with an OpenAI-compatible API,",
    "/load, /metrics and /health.",
    "",
    "Flags:",
    ...lines,
    `  ${"--help".padEnd(width)}Print this help.`,
    "",
    "Environment variables (SGLang's):",
    ...env,
    "",
    "Environment variables (spillway's):",
    `  ${"SPILLWAY_SIGNING_SECRET".padEnd(40)}serve inference only to requests signed by the edge with this secret`,
    `  ${"SPILLWAY_SIGNING_SECRET_PREVIOUS".padEnd(40)}also accept this older secret (during a rotation)`,
  ].join("\n");
}

/** A flag or environment error with a message meant for the command line. */
export class CliError extends Error {}

/** The `parseArgs` option table of the engine's flags (plus `--help`). */
export function engineParseArgsOptions(): Record<string, { type: "boolean" | "string"; short?: string }> {
  return {
    help: { type: "boolean", short: "h" },
    ...Object.fromEntries(
      FLAGS.map((f) => [f.flag, { type: f.kind === "bool" ? ("boolean" as const) : ("string" as const) }]),
    ),
  };
}

/**
 * Turns `parseArgs` results into engine option input (flag names to option keys, strings to numbers), and says
 * which flag each key came from.
 *
 * @example
 * ```ts
 * engineInputFromFlags({ "max-total-tokens": "4096", "disable-access-log": true }); // { maxTotalTokens: 4096, accessLog: false }
 * ```
 */
export function engineInputFromFlags(values: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of FLAGS) {
    const raw = values[f.flag];
    if (raw === undefined) continue;
    if (f.kind === "bool") input[f.key] = f.key === "accessLog" ? !raw : raw;
    else input[f.key] = convert(`--${f.flag}`, f.kind, raw as string);
  }
  return input;
}

/**
 * SGLang's environment variables (`SGLANG_INIT_NEW_TOKEN_RATIO`, ...) as engine option input.
 *
 * @example
 * ```ts
 * engineInputFromEnv({ SGLANG_RETRACT_DECODE_STEPS: "10" }); // { retractDecodeSteps: 10 }
 * ```
 */
export function engineInputFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const e of ENV_VARS) {
    const raw = env[e.name];
    if (raw !== undefined && raw !== "") input[e.key] = convert(e.name, "number", raw);
  }
  return input;
}

/** The flag (`--max-total-tokens`) or environment variable that sets an option key. */
export function sourceOfKey(key: string): string {
  const flag = FLAGS.find((f) => f.key === key);
  return flag ? `--${flag.flag}` : (ENV_VARS.find((e) => e.key === key)?.name ?? key);
}

/**
 * Validates merged option input once (the schema applies every default); a problem is reported by the source
 * `describe` names for its key (default: the flag or environment variable).
 *
 * @example
 * ```ts
 * validateEngineInput({ maxTotalTokens: 4096 }); // EngineOptions
 * ```
 */
export function validateEngineInput(
  input: Record<string, unknown>,
  describe: (key: string) => string = sourceOfKey,
): EngineOptions {
  const result = engineOptionsSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const keys = Object.keys(engineOptionsSchema.shape);
  // Named by where the value came from (its flag or environment variable), in the words startEngineServer uses.
  throw new CliError(
    optionIssueLines(result.error.issues, keys, (path) => describe(path.split(".")[0] ?? path)).join("\n"),
  );
}

/**
 * Parses `npm run engine` arguments and SGLang's environment variables into validated options.
 * Returns `"help"` for `--help`. Throws {@link CliError} with a message naming the flag.
 *
 * @example
 * ```ts
 * const options = parseEngineArgs(["--port", "8001", "--max-total-tokens", "4096"], process.env);
 * ```
 */
export function parseEngineArgs(argv: string[], env: NodeJS.ProcessEnv = {}): EngineOptions | "help" {
  let parsed: ReturnType<typeof parseArgs>;
  const options = engineParseArgsOptions();
  try {
    parsed = parseArgs({ args: withNegativeValues(argv, options), strict: true, allowPositionals: false, options });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\nRun with --help for the list of flags.`);
  }
  if (parsed.values.help) return "help";
  return validateEngineInput({ ...engineInputFromFlags(parsed.values), ...engineInputFromEnv(env) });
}

/** A negative number as a command line writes it: `-1`, `-0.5`, `-.5`, `-inf`. */
const NEGATIVE_NUMBER = /^-(\d|\.\d|inf(inity)?$)/i;

/**
 * Joins a value-taking flag and a negative number after it (`--chunked-prefill-size -1`, SGLang's way to turn
 * chunking off) into one argument (`--chunked-prefill-size=-1`): `parseArgs` reads any argument that starts with a
 * dash as a flag, and refused the pair with three lines about an "ambiguous" argument instead of taking the value
 * (or naming the flag's range in one line when the value is out of it).
 *
 * @example
 * ```ts
 * withNegativeValues(["--chunked-prefill-size", "-1"], engineParseArgsOptions()); // ["--chunked-prefill-size=-1"]
 * ```
 */
export function withNegativeValues(argv: string[], options: Record<string, { type: "boolean" | "string" }>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (
      arg.startsWith("--") &&
      options[arg.slice(2)]?.type === "string" &&
      next !== undefined &&
      NEGATIVE_NUMBER.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i += 1;
    } else out.push(arg);
  }
  return out;
}

function convert(source: string, kind: Kind, raw: string): unknown {
  if (kind === "string") return raw;
  const value = /^\+?inf(inity)?$/i.test(raw.trim()) ? Number.POSITIVE_INFINITY : Number(raw);
  if (raw.trim() === "" || Number.isNaN(value)) throw new CliError(`${source}: expected a number, got '${raw}'`);
  if (kind === "int" && !Number.isInteger(value)) throw new CliError(`${source}: expected an integer, got '${raw}'`);
  return value;
}

/**
 * The engine's flags: name, option key and kind (for `--config` files, whose keys are these flags' camelCase names).
 *
 * @example
 * ```ts
 * engineFlags().find((f) => f.flag === "max-total-tokens"); // { flag: "max-total-tokens", key: "maxTotalTokens", kind: "int" }
 * ```
 */
export function engineFlags(): { flag: string; key: string; kind: Kind }[] {
  return FLAGS.map(({ flag, key, kind }) => ({ flag, key, kind }));
}

/**
 * A flag's value as option input: a string converted to its kind (`"inf"` reads as Infinity), named by `source`
 * in the error.
 *
 * @example
 * ```ts
 * convertFlagValue("--speed", "number", "inf"); // Infinity
 * ```
 */
export function convertFlagValue(source: string, kind: Kind, raw: string): unknown {
  return convert(source, kind, raw);
}
