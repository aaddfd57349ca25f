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
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${text}`);
  return n;
}
