import type { z } from "zod";

/** An issue's message; for a record's refused key, why it was refused (zod's own says only "Invalid key in record"). */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_key" && issue.issues.length > 0) return issue.issues.map((i) => i.message).join("; ");
  return issue.message;
}

/**
 * The problems one issue stands for, each `path: message`. A union that no option fits is one issue saying only
 * "Invalid input": where the input has one option's own type (a replica written as an object), that option's
 * problems are the operator's, each at its own path (`replicas.0.load: Invalid option: expected one of ...`); where
 * every option is a literal (`backpressure.statusCode`), the message names them.
 *
 * @example
 * ```ts
 * problemsOf(schema.safeParse(input).error.issues[0]); // ["deployments.llama.routerShards: Too small: ..."]
 * ```
 */
export function problemsOf(issue: z.core.$ZodIssue, at: readonly PropertyKey[] = []): string[] {
  const path = [...at, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const fitting = issue.errors.filter(
      (option) => !option.some((i) => i.code === "invalid_type" && i.path.length === 0),
    );
    if (fitting.length === 1) return (fitting[0] ?? []).flatMap((i) => problemsOf(i, path));
    const literals = issue.errors.map((option) => {
      const only = option.length === 1 ? option[0] : undefined;
      return only?.code === "invalid_value" && only.path.length === 0 ? only.values : undefined;
    });
    if (literals.every((values) => values !== undefined)) {
      const names = literals.flat().map((value) => JSON.stringify(value));
      return [`${path.join(".") || "(root)"}: Invalid input: expected one of ${names.join("|")}`];
    }
  }
  return [`${path.join(".") || "(root)"}: ${messageOf(issue)}`];
}

/**
 * Every problem of a failed parse on one line, `path: message; path: message` (zod's own `message` is its issues
 * as pretty-printed JSON).
 *
 * @example
 * ```ts
 * problemsText(tenantPlanSchema.safeParse({ name: "a b" }).error); // "name: tenant names use letters, ..."
 * ```
 */
export function problemsText(error: z.ZodError): string {
  return error.issues.flatMap((issue) => problemsOf(issue)).join("; ");
}
