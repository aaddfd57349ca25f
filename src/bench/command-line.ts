import { type ParseArgsConfig, parseArgs } from "node:util";

/**
 * Command lines of the repository's own commands (the benchmarks and the soak here; the eval and demo commands
 * through `scripts/command-line.ts`, which re-exports this file: src never imports scripts/).
 */

/** A command line the command cannot run: the message says why and how to call it; `exitCode` 0 for `--help`. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode: 0 | 2,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/**
 * `node:util`'s `parseArgs` over `args`, with the command's usage: `--help` (or `-h`) asks for it (a
 * {@link UsageError} with exit code 0), and an unknown flag, a missing value or a stray argument is refused with
 * it (exit code 2) rather than with parseArgs' stack trace. With `allowPositionals`, exactly one argument is required.
 *
 * @example
 * ```ts
 * parseCommandLine("npm run eval -- [--seeds <n>]", { options: { seeds: { type: "string" } } }, ["--seeds", "3"]);
 * // { values: { seeds: "3" }, positionals: [] }
 * parseCommandLine("npm run eval -- [--seeds <n>]", { options: {} }, ["--sedes", "3"]); // throws UsageError (2)
 * ```
 */
export function parseCommandLine<const T extends ParseArgsConfig>(
  usage: string,
  config: T,
  args: readonly string[],
): Parsed<T> {
  if (args.includes("--help") || args.includes("-h")) throw new UsageError(`usage: ${usage}`, 0);
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs({ ...config, args: [...args] }) as Parsed<T>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"))
      throw new UsageError(`${(error as Error).message.split("\n")[0]}\nusage: ${usage}`, 2);
    throw error;
  }
  // A command that takes arguments takes exactly one (the eval commands' scenario or variant).
  if (config.allowPositionals && parsed.positionals.length !== 1)
    throw new UsageError(`expected one argument, got ${parsed.positionals.length}\nusage: ${usage}`, 2);
  return parsed;
}

/** Ends the process as a refused command line asks: its message (stdout for `--help`, else stderr), its code. */
function exitWith(error: UsageError): never {
  (error.exitCode === 0 ? console.log : console.error)(error.message);
  process.exit(error.exitCode);
}

/**
 * {@link parseCommandLine} over this process's arguments, for a command's entry point: on a {@link UsageError} it
 * prints the message (to stdout for `--help`, else stderr) and exits with its code.
 *
 * @example
 * ```ts
 * const { values } = commandLine("npm run eval:twins -- [--seeds <n>]", { options: { seeds: { type: "string" } } });
 * ```
 */
export function commandLine<const T extends ParseArgsConfig>(usage: string, config: T): Parsed<T> {
  try {
    return parseCommandLine(usage, config, process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    exitWith(error);
  }
}

/**
 * {@link commandLine}, then `read` over what it parsed (checking and converting the flags, e.g. with
 * {@link positiveIntFlag}): a {@link UsageError} that `read` throws ends the command the same way, its line and the
 * usage on stderr and exit code 2, rather than with a stack trace. All before the command starts any work.
 *
 * @example
 * ```ts
 * const { steps } = commandFlags("npm run bench:llama -- [--steps N]", { options: { steps: { type: "string" } } },
 *   ({ values }) => ({ steps: positiveIntFlag("steps", values.steps, 400) }));
 * // --steps 0: "--steps must be a positive integer, got 0", the usage, exit code 2
 * ```
 */
export function commandFlags<const T extends ParseArgsConfig, R>(
  usage: string,
  config: T,
  read: (parsed: Parsed<T>) => R,
): R {
  const parsed = commandLine(usage, config);
  try {
    return read(parsed);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    exitWith(new UsageError(`${error.message}\nusage: ${usage}`, error.exitCode));
  }
}

/**
 * A command-line flag that must be a positive integer: its value, or `fallback` when it was not given; anything
 * else stops the command with the flag's name.
 *
 * @example
 * ```ts
 * positiveIntFlag("seeds", values.seeds, 6); // 6 without --seeds; throws on --seeds 0 or --seeds two
 * ```
 */
export function positiveIntFlag(flag: string, text: string | undefined, fallback: number): number {
  const n = Number(text ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a positive integer, got ${text}`, 2);
  return n;
}

/**
 * A command-line flag that must be a number in a range (seconds, a load factor, a port): its value, or `fallback`
 * when it was not given; anything else (not a number, out of the range, a fraction where `integer`) stops the
 * command with the flag's name and the range. `above` is exclusive, `min` and `max` inclusive.
 *
 * @example
 * ```ts
 * numberFlag("idle-s", values["idle-s"], 10, { min: 0 }); // 10 without --idle-s; throws on --idle-s -1
 * numberFlag("overload", "1.5", 20, { above: 0 }); // 1.5; throws on --overload 0
 * numberFlag("port", "8787", 0, { min: 0, max: 65535, integer: true }); // 8787
 * ```
 */
export function numberFlag(
  flag: string,
  text: string | undefined,
  fallback: number,
  range: { min?: number; above?: number; max?: number; integer?: boolean },
): number {
  const n = text === undefined ? fallback : text.trim() === "" ? Number.NaN : Number(text);
  const ok =
    Number.isFinite(n) &&
    (range.min === undefined || n >= range.min) &&
    (range.above === undefined || n > range.above) &&
    (range.max === undefined || n <= range.max) &&
    (!range.integer || Number.isInteger(n));
  if (ok) return n;
  const bounds = [
    range.min !== undefined ? `at least ${range.min}` : undefined,
    range.above !== undefined ? `above ${range.above}` : undefined,
    range.max !== undefined ? `at most ${range.max}` : undefined,
  ].filter((bound) => bound !== undefined);
  const kind = range.integer ? "an integer" : "a number";
  throw new UsageError(`--${flag} must be ${[kind, bounds.join(" and ")].join(" ").trim()}, got ${text}`, 2);
}
