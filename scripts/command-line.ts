/**
 * The command-line helpers of the eval and demo commands. They live in `src/bench/command-line.ts`, where the
 * benchmarks and the soak (under src/, which never imports scripts/) use them too; this re-export keeps the
 * eval/ and scripts/ imports as they were.
 */
export {
  commandFlags,
  commandLine,
  numberFlag,
  parseCommandLine,
  positiveIntFlag,
  UsageError,
} from "../src/bench/command-line";
