import { describe, expect, it } from "vitest";
import { placedAtFirstUnclaimedRelease } from "../../../src/sim/first-release-bound";
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

describe("placedAtFirstUnclaimedRelease", () => {
  it("moves a waiting request's placement to the first slot release after it reached the router", () => {
    const other = served(1, 0, [0, 0], 1_100); // its slot is released at 1100 - 200 / 2 = 1000 ms
    const waited = served(2, 0, [500, 1_500], 5_000); // waited 1 s; the first release after 500 ms is at 1000 ms
    const placedAtOnce = served(3, 1_900, [2_000, 2_000], 6_000);
    const gaveUp: RequestTrace = { ...served(4, 0, [0, 0], 0), result: "gave_up" };
    const bound = placedAtFirstUnclaimedRelease([other, waited, placedAtOnce, gaveUp], (t) => t.id !== 1);
    expect(bound).toEqual([4.5, 4.1]);
  });

  it("never moves a placement later than it was", () => {
    const early = served(1, 0, [0, 0], 9_100); // released at 9000 ms, after the other was placed
    const waited = served(2, 0, [500, 800], 5_000);
    expect(placedAtFirstUnclaimedRelease([early, waited], (t) => t.id === 2)).toEqual([5]);
  });

  it("gives each release to one request: two that wait through the same gap do not both take it", () => {
    const first = served(1, 0, [0, 0], 1_100); // released at 1000 ms
    const second = served(2, 0, [0, 0], 3_100); // released at 3000 ms
    const earlier = served(3, 400, [500, 1_000], 5_000); // waited 500 ms, took the release at 1000 ms
    const later = served(4, 500, [600, 3_000], 7_000); // waited 2.4 s for the release at 3000 ms
    // The old bound moved the later one to 1000 ms as well (7 - 2 = 5 s); the release at 1000 ms is the earlier
    // one's, so the later one keeps the release at 3000 ms.
    const bound = placedAtFirstUnclaimedRelease([first, second, earlier, later], (t) => t.id >= 3);
    expect(bound).toEqual([4.6, 6.5]);
  });

  it("serves the chosen requests in the order they reached the router, whatever their order in the trace", () => {
    const one = served(1, 0, [0, 0], 1_100); // released at 1000 ms
    const two = served(2, 0, [0, 0], 2_100); // released at 2000 ms
    const later = served(3, 600, [600, 3_000], 6_000); // listed first, reached the router second
    const earlier = served(4, 500, [500, 3_000], 6_000);
    const bound = placedAtFirstUnclaimedRelease([one, two, later, earlier], (t) => t.id >= 3);
    expect(bound).toEqual([4.4, 3.5]); // the earlier one takes the release at 1000 ms, the later one 2000 ms
  });
});
