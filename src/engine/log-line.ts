/**
 * Prefixes a log line with SGLang's timestamp, `[YYYY-MM-DD HH:MM:SS] `, in local time.
 *
 * @example
 * ```ts
 * timestamped("Decode batch, #running-req: 5", new Date(2025, 0, 2, 3, 4, 5));
 * // "[2025-01-02 03:04:05] Decode batch, #running-req: 5"
 * ```
 */
export function timestamped(line: string, now: Date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
  return `[${stamp}] ${line}`;
}

/** Log levels, SGLang's (`--log-level`), least verbose last. */
export const LOG_LEVELS = ["debug", "info", "warning", "error", "critical"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A line logger with a level threshold. `write` is injectable so tests and tools can capture lines.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const log = createLogger("info", (l) => lines.push(l));
 * log.info("Prefill batch, #new-seq: 1"); // lines[0] starts with "[20"
 * ```
 */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
  const threshold = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => (line: string) => {
    if (LOG_LEVELS.indexOf(l) >= threshold) write(timestamped(line));
  };
  return { debug: at("debug"), info: at("info"), warning: at("warning"), error: at("error") };
}

/** A logger (see {@link createLogger}). */
export type Logger = ReturnType<typeof createLogger>;
