import { describe, expect, it } from "vitest";
import { e2ePolicy } from "../../../eval/e2e-fleet";

describe("e2ePolicy (the policies an end-to-end run can name)", () => {
  it("takes the evaluation's policies and the default's variants of its booking settings", () => {
    expect(e2ePolicy("static-30").retryAfterS).toBe(30);
    const newest = e2ePolicy("booked_capacity:newest-first-order");
    expect(newest.retryAfterPolicy).toBe("booked_capacity");
    expect(newest.booking).toEqual({ demotedOrder: "newest_first" });
  });

  it("refuses unknown ids and variants of what the Worker's configuration cannot set", () => {
    expect(() => e2ePolicy("booked_capacity:no-such-variant")).toThrow(/unknown policy/);
    expect(() => e2ePolicy("nope")).toThrow(/unknown policy/);
    expect(() => e2ePolicy("booked_capacity:two-step")).toThrow(/no ledger tunables/);
    expect(() => e2ePolicy("booked_capacity:clairvoyant-forecast")).toThrow(/no ledger tunables/);
  });
});
