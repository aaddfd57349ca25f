import { describe, expect, it } from "vitest";
import { e2ePolicy } from "../../../eval/e2e-fleet";

describe("e2ePolicy (the policies an end-to-end run can name)", () => {
  it("takes the evaluation's policies and the default's variants of its booking settings", () => {
    expect(e2ePolicy("static-30").retryAfterS).toBe(30);
    const next = e2ePolicy("booked_capacity:next-horizon-order");
    expect(next.retryAfterPolicy).toBe("booked_capacity");
    expect(next.booking).toEqual({ demotedOrder: "next_horizon" });
  });

  it("refuses unknown ids and variants of what the Worker's configuration cannot set", () => {
    expect(() => e2ePolicy("booked_capacity:no-such-variant")).toThrow(/unknown policy/);
    expect(() => e2ePolicy("nope")).toThrow(/unknown policy/);
    expect(() => e2ePolicy("booked_capacity:two-step")).toThrow(/no ledger tunables/);
    expect(() => e2ePolicy("booked_capacity:clairvoyant-forecast")).toThrow(/no ledger tunables/);
  });
});
