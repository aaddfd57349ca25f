import type { E2eOpenAiPolicy, E2eOpenAiRun } from "../../src/sim/report-markdown";

/**
 * One policy's record of an end-to-end run for the report's tests: ten requests, all served, 1.5 attempts each. A
 * test states only what it is about, in `overrides`.
 *
 * @example
 * ```ts
 * e2ePolicy("booked_capacity", { attemptsPerOffered: 1.4 });
 * ```
 */
export function e2ePolicy(id: string, overrides: Partial<E2eOpenAiPolicy> = {}): E2eOpenAiPolicy {
  return {
    id,
    requests: 10,
    served: 10,
    servedFraction: 1,
    servedWithinS: { "5": 1 },
    attemptsPerOffered: 1.5,
    timeToSuccessP50S: 1,
    headerlessServedFraction: 1,
    sdkServedFraction: 1,
    unfinished: 0,
    ...overrides,
  };
}

/**
 * An end-to-end run of `policies` as `eval/e2e-openai.ts` writes it: the demo's capacity, 30% header-less clients,
 * 50-300 ms of proxy delay, cut at 150 s; `overrides` for the rest (its seeds, its command).
 *
 * @example
 * ```ts
 * e2eRun([e2ePolicy("a")], { seeds: [1, 2] });
 * ```
 */
export function e2eRun(policies: E2eOpenAiPolicy[], overrides: Partial<E2eOpenAiRun> = {}): E2eOpenAiRun {
  return {
    generatedBy: "test",
    capacityRps: 17,
    phases: [],
    headerlessShare: 0.3,
    proxyDelayMs: [50, 300],
    maxRunS: 150,
    policies,
    ...overrides,
  };
}
