import type { z } from "zod";

/**
 * Engine options that failed validation (see {@link parseEngineOptions}): the message has one line per problem, each
 * naming the option (`startEngineServer: port: expected a number, got "abc"`); `issues` keeps zod's for programs.
 *
 * @example
 * ```ts
 * try { await startEngineServer({ port: "abc" }); }
 * catch (e) { if (e instanceof EngineOptionsError) console.error(e.message); else throw e; }
 * ```
 */
export class EngineOptionsError extends Error {
  override name = "EngineOptionsError";
  constructor(
    message: string,
    /** Zod's issues, as validation reported them. */
    readonly issues: readonly z.core.$ZodIssue[],
  ) {
    super(message);
  }
}

/** Keys refused with a hint other than a spelling: the CLI's flag names, camel-cased, that are no option. */
const KEY_HINTS: Record<string, string> = { disableAccessLog: "accessLog: false" };

/**
 * One readable line per problem of a failed options parse, naming the option: `port: expected a number, got "abc"`,
 * `unknown option decodePerKtokenMs (did you mean decodePerKTokenMs?)`. Issues need their `input` (parse with
 * `reportInput: true`) to say what was given; `knownKeys` lets an unknown key suggest the option it misspells;
 * `nameOf` names an option's path as the caller's user wrote it (the CLI: `maxTotalTokens` -> `--max-total-tokens`).
 *
 * @example
 * ```ts
 * const result = schema.safeParse(input, { reportInput: true });
 * if (!result.success) throw new Error(optionIssueLines(result.error.issues, Object.keys(schema.shape)).join("\n"));
 * ```
 */
export function optionIssueLines(
  issues: readonly z.core.$ZodIssue[],
  knownKeys: readonly string[] = [],
  nameOf: (path: string) => string = (path) => path,
): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => unknownKeyLine(key, knownKeys));
    const path = issue.path.map(String).join(".");
    return [`${path === "" ? "options" : nameOf(path)}: ${problemOf(issue)}`];
  });
}

function unknownKeyLine(key: string, knownKeys: readonly string[]): string {
  const hint = KEY_HINTS[key] ?? knownKeys.find((known) => known.toLowerCase() === key.toLowerCase());
  return hint === undefined ? `unknown option ${key}` : `unknown option ${key} (did you mean ${hint}?)`;
}

/** What is wrong with the value, in words (zod's own message where there is nothing better to say). */
function problemOf(issue: z.core.$ZodIssue): string {
  const got = "input" in issue ? `, got ${shown(issue.input)}` : "";
  switch (issue.code) {
    case "invalid_type":
      return `expected ${typeName(issue.expected)}${got}`;
    case "invalid_value":
      return `expected ${oneOf(issue.values)}${got}`;
    case "too_small":
    case "too_big":
      return `${boundOf(issue) ?? issue.message}${got}`;
    case "invalid_union": {
      // Each branch's first issue says what that branch expected (`speed`: a number, or Infinity).
      const expected = issue.errors.map((branch) => branch[0]);
      if (expected.length === 0 || expected.some((i) => i?.code !== "invalid_type" && i?.code !== "invalid_value"))
        return `${issue.message}${got}`;
      const names = expected.map((i) =>
        i?.code === "invalid_type" ? typeName(i.expected) : oneOf((i as z.core.$ZodIssueInvalidValue).values),
      );
      return `expected ${names.join(" or ")}${got}`;
    }
    case "custom":
      // A refinement on the whole object reports it as input: only a single value is worth showing.
      return typeof issue.input === "object" && issue.input !== null ? issue.message : `${issue.message}${got}`;
    default:
      return issue.message;
  }
}

function typeName(expected: string): string {
  switch (expected) {
    case "number":
      return "a number";
    case "int":
      return "an integer";
    case "string":
      return "a string";
    case "boolean":
      return "true or false";
    case "object":
      return "an object";
    case "array":
      return "an array";
    default:
      return expected;
  }
}

function oneOf(values: readonly unknown[]): string {
  const shownValues = values.map(shown);
  return shownValues.length === 1 ? (shownValues[0] ?? "") : `one of ${shownValues.join(", ")}`;
}

function boundOf(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string | undefined {
  const small = issue.code === "too_small";
  const bound = small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum;
  if (issue.origin === "number" || issue.origin === "int")
    return issue.inclusive
      ? `must be at ${small ? "least" : "most"} ${bound}`
      : `must be ${small ? "greater" : "less"} than ${bound}`;
  if (issue.origin === "string") {
    if (small && Number(bound) === 1) return "must not be empty";
    return `must be at ${small ? "least" : "most"} ${bound} characters long`;
  }
  return undefined;
}

/** A value as the caller wrote it: strings quoted (and cut short), numbers as numbers, objects by kind. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === "bigint") return `${value}n`;
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}
