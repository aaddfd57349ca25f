import { describe, expect, it } from "vitest";
import { compareOrderings, type RankedFigures } from "../../../src/sim/run-ordering";

const run = (id: string, served: number, within5: number, attempts: number): RankedFigures => ({
  id,
  servedFraction: served,
  servedWithinS: { "5": within5 },
  attemptsPerOffered: attempts,
});

describe("compareOrderings", () => {
  it("ranks best first (fewest attempts first) and finds every pair alike in identical runs", () => {
    const a = [run("a", 0.99, 0.5, 1.2), run("b", 0.6, 0.7, 2.0), run("c", 0.9, 0.6, 1.5)];
    const rows = compareOrderings(a, a, [5]);
    expect(rows.map((r) => r.measure)).toEqual(["served", "<= 5 s", "attempts per offered"]);
    expect(rows[0]?.first).toEqual(["a", "c", "b"]);
    expect(rows[1]?.first).toEqual(["b", "c", "a"]);
    expect(rows[2]?.first).toEqual(["a", "c", "b"]);
    for (const r of rows) expect([r.alike, r.pairs, r.opposite]).toEqual([3, 3, []]);
  });

  it("names a pair the two runs order oppositely, ahead in the first run first", () => {
    const first = [run("a", 0.95, 0.5, 1.2), run("b", 0.9, 0.5, 1.5)];
    const second = [run("a", 0.8, 0.5, 1.6), run("b", 0.9, 0.5, 1.5)];
    const [served, , attempts] = compareOrderings(first, second, [5]);
    expect(served?.opposite).toEqual([["a", "b"]]);
    expect(served?.alike).toBe(0);
    expect(attempts?.opposite).toEqual([["a", "b"]]);
  });

  it("counts a difference within the tolerance as a tie that agrees with either order", () => {
    const first = [run("a", 0.905, 0.5, 1.5), run("b", 0.9, 0.5, 1.51)];
    const second = [run("a", 0.8, 0.5, 1.6), run("b", 0.9, 0.5, 1.5)];
    const [served, , attempts] = compareOrderings(first, second, [5]);
    expect(served?.opposite).toEqual([]);
    expect(attempts?.opposite).toEqual([]);
  });

  it("compares only the policies both runs measured", () => {
    const first = [run("a", 0.9, 0.5, 1.2), run("b", 0.8, 0.5, 1.5), run("only-here", 1, 1, 1)];
    const second = [run("b", 0.8, 0.5, 1.5), run("a", 0.9, 0.5, 1.2)];
    expect(compareOrderings(first, second, [5])[0]).toMatchObject({ first: ["a", "b"], second: ["a", "b"], pairs: 1 });
  });
});
