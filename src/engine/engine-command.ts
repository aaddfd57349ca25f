import { readFileSync } from "node:fs";
import { CliError, engineFlags, parseEngineArgs } from "./cli";
import type { EngineOptions } from "./options";

/** What `npm run engine` runs with: the engine's options and the process's own settings. */
export interface EngineCommand {
  options: EngineOptions;
  /** Seconds a SIGTERM waits for in-flight requests before aborting them. */
  shutdownGraceS: number;
}

/** Default of `--shutdown-grace-s`. */
export const DEFAULT_SHUTDOWN_GRACE_S = 30;

/** The help lines of the flags this module adds to {@link engineHelp}'s. */
export const COMMAND_HELP = [
  "Process flags:",
  "  --config <file.json>            Read flags from a JSON object whose keys are the flags' camelCase names",
  '                                  (e.g. {"maxTotalTokens": 4096, "speed": 2, "disableAccessLog": true});',
  "                                  flags given on the command line override it.",
  `  --shutdown-grace-s <value>      On SIGTERM/SIGINT, refuse new requests with 503 and let in-flight ones finish`,
  `                                  for this long before aborting them (default ${DEFAULT_SHUTDOWN_GRACE_S}).`,
].join("\n");

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Removes `--name value` / `--name=value` from argv; returns the last value given. */
function takeFlag(argv: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; ) {
    const arg = argv[i] as string;
    if (arg === `--${name}`) {
      if (i + 1 >= argv.length) throw new CliError(`--${name}: a value is required`);
      value = argv[i + 1];
      argv.splice(i, 2);
    } else if (arg.startsWith(`--${name}=`)) {
      value = arg.slice(name.length + 3);
      argv.splice(i, 1);
    } else i++;
  }
  return value;
}

function graceOf(source: string, raw: unknown): number {
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw new CliError(`${source}: expected a number of seconds >= 0, got ${JSON.stringify(raw)}`);
  return value;
}

/** Turns a config file's object into flags, checking each key and value's type. */
function configToArgs(file: string, json: unknown): { args: string[]; shutdownGraceS?: number } {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new CliError(`--config ${file}: expected a JSON object of flags, e.g. {"port": 8001}`);
  const flags = new Map(engineFlags().map((f) => [camel(f.flag), f]));
  const args: string[] = [];
  let shutdownGraceS: number | undefined;
  for (const [key, value] of Object.entries(json)) {
    const where = `--config ${file}: ${key}`;
    if (key === "shutdownGraceS") {
      shutdownGraceS = graceOf(where, value);
      continue;
    }
    const flag = flags.get(key);
    if (!flag) {
      throw new CliError(
        `--config ${file}: unknown key "${key}"; keys are the flags' camelCase names (${[...flags.keys(), "shutdownGraceS"].join(", ")})`,
      );
    }
    if (flag.kind === "bool") {
      if (typeof value !== "boolean")
        throw new CliError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
      if (value) args.push(`--${flag.flag}`);
    } else if (flag.kind === "string") {
      if (typeof value !== "string") throw new CliError(`${where}: expected a string, got ${JSON.stringify(value)}`);
      args.push(`--${flag.flag}`, value);
    } else {
      // Numbers, or strings such as "inf" (JSON has no Infinity).
      if (typeof value !== "number" && typeof value !== "string")
        throw new CliError(`${where}: expected a number, got ${JSON.stringify(value)}`);
      args.push(`--${flag.flag}`, String(value));
    }
  }
  return { args, shutdownGraceS };
}

/**
 * Parses `npm run engine` arguments: `--config FILE.json` (flags as camelCase keys; the command line
 * overrides them), `--shutdown-grace-s`, and every engine flag (see {@link parseEngineArgs}). Returns `"help"`
 * for `--help`. Throws {@link CliError} with a message naming the flag, or the file and key.
 *
 * @example
 * ```ts
 * // engine.json: {"maxTotalTokens": 4096, "speed": 2}
 * const command = parseEngineCommand(["--config", "engine.json", "--speed", "4"], process.env);
 * // command.options.speed === 4, command.options.maxTotalTokens === 4096, command.shutdownGraceS === 30
 * ```
 */
export function parseEngineCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): EngineCommand | "help" {
  const rest = [...argv];
  const configFile = takeFlag(rest, "config");
  const graceFlag = takeFlag(rest, "shutdown-grace-s");
  let fromConfig: { args: string[]; shutdownGraceS?: number } = { args: [] };
  if (configFile !== undefined) {
    let text: string;
    try {
      text = readFile(configFile);
    } catch (error) {
      throw new CliError(`--config ${configFile}: cannot read it (${(error as Error).message})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new CliError(`--config ${configFile}: not valid JSON (${(error as Error).message})`);
    }
    fromConfig = configToArgs(configFile, json);
  }
  let options: EngineOptions | "help";
  try {
    // Later flags win in parseArgs: the command line overrides the file.
    options = parseEngineArgs([...fromConfig.args, ...rest], env);
  } catch (error) {
    if (!(error instanceof CliError) || configFile === undefined) throw error;
    // Say where a bad value came from when the file alone is already wrong.
    try {
      parseEngineArgs(fromConfig.args, env);
    } catch (configError) {
      if (configError instanceof CliError) throw new CliError(`--config ${configFile}: ${configError.message}`);
    }
    throw error;
  }
  if (options === "help") return "help";
  const shutdownGraceS =
    graceFlag !== undefined
      ? graceOf("--shutdown-grace-s", graceFlag)
      : (fromConfig.shutdownGraceS ?? DEFAULT_SHUTDOWN_GRACE_S);
  return { options, shutdownGraceS };
}
