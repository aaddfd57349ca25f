import { type ParseArgsConfig, parseArgs } from "node:util";

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
    (error.exitCode === 0 ? console.log : console.error)(error.message);
    process.exit(error.exitCode);
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
