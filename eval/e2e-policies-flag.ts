import { UsageError } from "../scripts/command-line";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../src/sim/policies";
import { e2ePolicy } from "./e2e-fleet";

/**
 * The `--policies a,b` flag of the end-to-end commands (`eval/e2e.ts`, `eval/e2e-openai.ts`): the ids, or `fallback`
 * without the flag. Each id must be one that {@link e2ePolicy} runs, checked when the command line is read: an
 * unknown one used to pass until the fleet was built, after the command had begun its work, and ended it with a
 * stack trace instead of the usage.
 *
 * @throws UsageError (exit code 2) naming the first id that runs no end-to-end policy, and the known ones; or the
 * first id given twice.
 * @example
 * ```ts
 * e2ePoliciesFlag("static-30,retry_schedule", ["static-5"]); // ["static-30", "retry_schedule"]
 * e2ePoliciesFlag("static-3O", ["static-5"]); // UsageError: --policies: unknown policy static-3O (known: none, ...)
 * e2ePoliciesFlag("static-30,static-30", []); // UsageError: --policies: static-30 is given twice
 * ```
 */
export function e2ePoliciesFlag(text: string | undefined, fallback: readonly string[]): string[] {
  if (text === undefined) return [...fallback];
  const ids = text.split(",");
  for (const id of ids) {
    try {
      e2ePolicy(id);
    } catch (error) {
      const known = `${EVAL_POLICIES.map((p) => p.id).join(", ")}, or ${DEFAULT_POLICY_ID}:<variant>`;
      throw new UsageError(`--policies: ${(error as Error).message} (known: ${known})`, 2);
    }
  }
  // A repeated id ran that policy twice.
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) throw new UsageError(`--policies: ${repeated} is given twice`, 2);
  return ids;
}
