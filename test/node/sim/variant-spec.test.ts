import { describe, expect, it } from "vitest";
import { evaluatePolicy } from "../../../src/sim/evaluation";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../../../src/sim/policies";
import { parseVariantSpec } from "../../../src/sim/variant-spec";
import { DEFAULT_POLICY_VARIANTS } from "../../../src/sim/variants";
import { smallBurst } from "./small-scenario";

describe("parseVariantSpec (npm run eval:variant)", () => {
  it("takes a variant of src/sim/variants.ts by its id", () => {
    const twoStep = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "two-step");
    expect(parseVariantSpec("two-step")).toEqual(twoStep?.spec);
  });

  it("builds the default with the given ledger and admission fields changed, and only those", () => {
    const spec = parseVariantSpec('{"ledger":{"burstFadeS":5,"queueRefill":false},"booking":{"demoteAfterS":null}}');
    expect(spec.retryAfterPolicy).toBe("booked_capacity");
    expect(spec.ledger).toEqual({ burstFadeS: 5, queueRefill: false });
    expect(spec.booking).toEqual({ demoteAfterS: null });
    expect(spec.id).toBe(
      `${DEFAULT_POLICY_ID}:{"ledger":{"burstFadeS":5,"queueRefill":false},"booking":{"demoteAfterS":null}}`,
    );
  });

  it("runs like the variant it spells out: the same overrides, the same simulation", () => {
    const scenario = smallBurst();
    const fromId = parseVariantSpec("burst-fade-5s");
    const spelled = parseVariantSpec('{"ledger":{"burstFadeS":5}}');
    const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;
    const run = (spec: PolicySpec) => evaluatePolicy(scenario, [scenario.seed], 20, spec).metrics;
    expect(run(spelled)).toEqual(run(fromId));
    // An empty set of overrides is the default itself.
    expect(run(parseVariantSpec("{}"))).toEqual(run(base));
  });

  it("takes the simulator's counterfactuals too: the clairvoyant forecast and the known capacity", () => {
    const spec = parseVariantSpec('{"clairvoyantForecast":true,"knownCapacity":true,"ledger":{"horizonPackS":120}}');
    expect(spec).toMatchObject({ clairvoyantForecast: true, knownCapacity: true, ledger: { horizonPackS: 120 } });
    // Spelled out, each runs the same simulation as the committed variant.
    const scenario = smallBurst();
    const run = (p: PolicySpec) => evaluatePolicy(scenario, [scenario.seed], 20, p).metrics;
    const known = run(parseVariantSpec('{"knownCapacity":true}'));
    expect(known).toEqual(run(parseVariantSpec("known-capacity")));
    expect(known).not.toEqual(run(parseVariantSpec("{}"))); // the field is not dropped on the way
    const clairvoyant = run(parseVariantSpec('{"clairvoyantForecast":true}'));
    expect(clairvoyant).toEqual(run(parseVariantSpec("clairvoyant-forecast")));
    expect(clairvoyant).not.toEqual(run(parseVariantSpec("{}")));
    expect(() => parseVariantSpec('{"knownCapacity":"yes"}')).toThrow(/knownCapacity/);
  });

  it("refuses unknown fields and values of the wrong type, naming the field", () => {
    expect(() => parseVariantSpec('{"ledger":{"burstFade":5}}')).toThrow(/burstFade[\s\S]*ledger/);
    expect(() => parseVariantSpec('{"ledger":{"queueRefill":1}}')).toThrow(/ledger\.queueRefill/);
    expect(() => parseVariantSpec('{"booking":{"demotedOrder":"lifo"}}')).toThrow(/booking\.demotedOrder/);
    expect(() => parseVariantSpec('{"admission":{}}')).toThrow(/admission/);
  });

  it("says what it accepts when given neither a variant id nor JSON", () => {
    expect(() => parseVariantSpec("two-steps")).toThrow(
      /not a variant id \(held-room, .*two-step.*\) nor a JSON object/,
    );
  });
});
