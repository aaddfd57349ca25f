import { describe, expect, it } from "vitest";
import { placedAtFirstRelease } from "../../../src/sim/first-release-bound";
import type { AttemptRecord, RequestTrace } from "../../../src/sim/trace";

function served(id: number, arrivalMs: number, attempt: [number, number], completedAtMs: number): RequestTrace {
  const admitted: AttemptRecord = { atMs: attempt[0], outcome: "admitted", answeredAtMs: attempt[1], hinted: false };
  return {
    id,
    arrivalMs,
    client: "openai_node",
    roundTripMs: 200,
    attempts: [admitted],
    result: "served",
    completedAtMs,
    outputTokens: 1,
  };
}

describe("placedAtFirstRelease", () => {
  it("moves a waiting request's placement to the first slot release after it reached the router", () => {
    const other = served(1, 0, [0, 0], 1_100); // its slot is released at 1100 - 200 / 2 = 1000 ms
    const waited = served(2, 0, [500, 1_500], 5_000); // waited 1 s; the first release after 500 ms is at 1000 ms
    const placedAtOnce = served(3, 1_900, [2_000, 2_000], 6_000);
    const gaveUp: RequestTrace = { ...served(4, 0, [0, 0], 0), result: "gave_up" };
    const bound = placedAtFirstRelease([other, waited, placedAtOnce, gaveUp], (t) => t.id !== 1);
    expect(bound).toEqual([4.5, 4.1]);
  });

  it("never moves a placement later than it was", () => {
    const early = served(1, 0, [0, 0], 9_100); // released at 9000 ms, after the other was placed
    const waited = served(2, 0, [500, 800], 5_000);
    expect(placedAtFirstRelease([early, waited], (t) => t.id === 2)).toEqual([5]);
  });
});
