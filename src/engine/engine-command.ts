import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  CliError,
  convertFlagValue,
  engineFlags,
  engineInputFromEnv,
  engineInputFromFlags,
  engineParseArgsOptions,
  type parseEngineArgs,
  sourceOfKey,
  validateEngineInput,
  withNegativeValues,
} from "./cli";
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

function graceOf(source: string, raw: unknown): number {
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw new CliError(`${source}: expected a number of seconds >= 0, got ${JSON.stringify(raw)}`);
  return value;
}

/** What a config file sets: engine option input (by option key), the flag of each key, and the grace period. */
interface ConfigInput {
  input: Record<string, unknown>;
  flagOf: Map<string, string>;
  shutdownGraceS?: number;
}

/** Turns a config file's object into engine option input, checking each key and value's type. */
function configInput(file: string, json: unknown): ConfigInput {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new CliError(`--config ${file}: expected a JSON object of flags, e.g. {"port": 8001}`);
  const flags = new Map(engineFlags().map((f) => [camel(f.flag), f]));
  const result: ConfigInput = { input: {}, flagOf: new Map() };
  for (const [key, value] of Object.entries(json)) {
    const where = `--config ${file}: ${key}`;
    if (key === "shutdownGraceS") {
      result.shutdownGraceS = graceOf(where, value);
      continue;
    }
    const flag = flags.get(key);
    if (!flag) {
      throw new CliError(
        `--config ${file}: unknown key "${key}"; keys are the flags' camelCase names (${[...flags.keys(), "shutdownGraceS"].join(", ")})`,
      );
    }
    result.flagOf.set(flag.key, flag.flag);
    if (flag.kind === "bool") {
      if (typeof value !== "boolean")
        throw new CliError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
      // The flag `--disable-access-log` sets `accessLog: false`; the other switches set their key to true.
      result.input[flag.key] = flag.key === "accessLog" ? !value : value;
    } else if (flag.kind === "string") {
      if (typeof value !== "string") throw new CliError(`${where}: expected a string, got ${JSON.stringify(value)}`);
      result.input[flag.key] = value;
    } else {
      // Numbers, or strings such as "inf" (JSON has no Infinity).
      if (typeof value !== "number" && typeof value !== "string")
        throw new CliError(`${where}: expected a number, got ${JSON.stringify(value)}`);
      result.input[flag.key] = convertFlagValue(`--config ${file}: --${flag.flag}`, flag.kind, String(value));
    }
  }
  return result;
}

/**
 * A `parseArgs` failure as a message naming the flag (a missing value reads "--name: a value is required"); the
 * command prints its usage after it.
 */
function argsError(error: Error & { code?: string }): CliError {
  const missing = /^Option '(--[a-z-]+)[^']*' argument missing/.exec(error.message);
  if (missing) return new CliError(`${missing[1]}: a value is required`);
  // A flag followed by another flag (`--port --speed 2`): one line, not parseArgs' three about an "ambiguous" argument.
  const ambiguous = /^Option '(--[a-z-]+)[^']*' argument is ambiguous/.exec(error.message);
  if (ambiguous)
    return new CliError(
      `${ambiguous[1]}: a value is required (write ${ambiguous[1]}=VALUE for one that starts with '-')`,
    );
  return new CliError(error.message);
}

/**
 * Parses `npm run engine` arguments with one `node:util` `parseArgs`: `--config FILE.json` (flags as camelCase
 * keys), `--shutdown-grace-s`, and every engine flag (see {@link parseEngineArgs}). The file's object and the
 * command line's flags merge as objects (the command line wins), then SGLang's environment variables, and the
 * result is validated once. Returns `"help"` for `--help`. Throws {@link CliError} with a message naming the
 * flag, or the file and key.
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
  let values: Record<string, unknown>;
  const flagTable = {
    ...engineParseArgsOptions(),
    config: { type: "string" as const },
    "shutdown-grace-s": { type: "string" as const },
  };
  try {
    values = parseArgs({
      args: withNegativeValues(argv, flagTable),
      strict: true,
      allowPositionals: false,
      options: flagTable,
    }).values;
  } catch (error) {
    throw argsError(error as Error);
  }
  if (values.help) return "help";
  const configFile = values.config as string | undefined;
  let fromConfig: ConfigInput = { input: {}, flagOf: new Map() };
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
    fromConfig = configInput(configFile, json);
  }
  const fromFlags = engineInputFromFlags(values);
  const input = { ...fromConfig.input, ...fromFlags, ...engineInputFromEnv(env) };
  // A bad value is named where it came from: the command line, or the file when the command line left it.
  const describe = (key: string) =>
    !Object.hasOwn(fromFlags, key) && fromConfig.flagOf.has(key)
      ? `--config ${configFile}: --${fromConfig.flagOf.get(key)}`
      : sourceOfKey(key);
  const options = validateEngineInput(input, describe);
  const graceFlag = values["shutdown-grace-s"];
  const shutdownGraceS =
    graceFlag !== undefined
      ? graceOf("--shutdown-grace-s", graceFlag)
      : (fromConfig.shutdownGraceS ?? DEFAULT_SHUTDOWN_GRACE_S);
  return { options, shutdownGraceS };
}
