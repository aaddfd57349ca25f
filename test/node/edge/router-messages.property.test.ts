import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkedAcquire,
  checkedReleaseAll,
  checkedReplicaFailed,
  checkedShard,
  checkedTicket,
  RouterMessageError,
} from "../../../src/edge/router-messages";
import { tenantPlanSchema } from "../../../src/edge/tenant-config";
import { propertyRuns } from "../../support/property-runs";

/**
 * The checks a router (the DeploymentRouter Durable Object) makes on what it is sent (src/edge/router-messages.ts),
 * against the tenant configuration's zod schema (src/edge/tenant-config.ts), which decides what a tenant's name,
 * weight and priority may be. For `acquire`'s options, its carried slots and `releaseAll`'s batches drawn from a
 * wide domain (in range, at the bounds, past them, NaN, ±Infinity, wrong types, unknown keys):
 *
 * - a message is accepted exactly when every field is in its range: a tenant, weight and priority the plan schema
 *   accepts, a non-negative finite wait, a positive finite horizon, a non-empty string ticket and fingerprint of at
 *   most 128 characters, booleans where flags are (a released slot's: a boolean or "full"), no unknown option;
 * - an accepted message comes back unchanged (the same objects, not a copy);
 * - a refused one throws a RouterMessageError whose message names every bad field's path.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(400, 20261206);

const planAccepts = (field: "name" | "weight" | "priority", value: unknown) =>
  tenantPlanSchema.shape[field].safeParse(value).success && value !== undefined;

const anyNumber = fc.oneof(
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -0, 1, 1000, 1000.0001, 0.0001, -1, Number.MIN_VALUE, Number.MAX_VALUE),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const wrongType = fc.constantFrom<unknown>(null, "1", true, [], {});
const tenantName = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/),
  fc.constantFrom("", "a b", "é", "x".repeat(65), "__proto__", "anonymous"),
);
const ticketish = fc.oneof(
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 128 }),
  fc.constantFrom<unknown>("", "x".repeat(129), 5, null),
);

/** A field of a drawn message, and whether its value is in range. */
interface Drawn {
  value: Record<string, unknown>;
  bad: string[];
}

/** One optional field: absent (fine), or a value the `ok` test judges. */
const field = (name: string, values: fc.Arbitrary<unknown>, ok: (v: unknown) => boolean) =>
  fc.option(values, { nil: undefined, freq: 3 }).map((v) => ({ name, v, ok: v === undefined || ok(v) }));

const options: fc.Arbitrary<Drawn> = fc
  .tuple(
    field("retry", fc.oneof(fc.boolean(), wrongType), (v) => typeof v === "boolean"),
    field("fingerprint", ticketish, (v) => typeof v === "string" && v.length >= 1 && v.length <= 128),
    field(
      "clientHorizonS",
      fc.oneof(anyNumber, wrongType),
      (v) => typeof v === "number" && Number.isFinite(v) && v > 0,
    ),
    field("sdkClient", fc.oneof(fc.boolean(), wrongType), (v) => typeof v === "boolean"),
    field("waitedMs", fc.oneof(anyNumber, wrongType), (v) => typeof v === "number" && Number.isFinite(v) && v >= 0),
    field("tenant", fc.oneof(tenantName, wrongType), (v) => planAccepts("name", v)),
    field("weight", fc.oneof(anyNumber, wrongType), (v) => planAccepts("weight", v)),
    field("priority", fc.constantFrom<unknown>("interactive", "batch", "urgent", "", 1), (v) =>
      planAccepts("priority", v),
    ),
    fc.option(fc.constantFrom("priorty", "deadline"), { nil: undefined, freq: 5 }),
  )
  .map(([...fields]) => {
    const unknownKey = fields.pop() as string | undefined;
    const value: Record<string, unknown> = {};
    const bad: string[] = [];
    for (const f of fields as { name: string; v: unknown; ok: boolean }[]) {
      if (f.v !== undefined) value[f.name] = f.v;
      if (!f.ok) bad.push(`options.${f.name}`);
    }
    if (unknownKey) {
      value[unknownKey] = 1;
      bad.push("options");
    }
    return { value, bad };
  });

const released = fc.array(
  fc
    .tuple(ticketish, fc.oneof(fc.boolean(), fc.constant("full"), wrongType, fc.constantFrom("down", "FULL", "")))
    .map(([t, f]) => ({
      slot: [t, f] as unknown,
      // A slot's end: a boolean (the replica failed or not), or "full" (its own 429).
      ok: checkTicket(t) && (typeof f === "boolean" || f === "full"),
    })),
  { maxLength: 3 },
);
const handedOff = fc.array(
  fc
    .tuple(
      ticketish,
      fc.option(tenantName, { nil: undefined }),
      fc.oneof(anyNumber, fc.constant(1)),
      fc.constantFrom<unknown>("interactive", "batch", "urgent"),
      fc.option(ticketish, { nil: undefined }),
    )
    .map(([t, tenant, weight, priority, fp]) => ({
      slot: [t, tenant, weight, priority, ...(fp === undefined ? [] : [fp])] as unknown,
      ok:
        checkTicket(t) &&
        (tenant === undefined || planAccepts("name", tenant)) &&
        planAccepts("weight", weight) &&
        planAccepts("priority", priority) &&
        (fp === undefined || checkTicket(fp)),
    })),
  { maxLength: 3 },
);

function checkTicket(t: unknown): boolean {
  return typeof t === "string" && t.length >= 1 && t.length <= 128;
}

/** The message a refusal throws, or `undefined` when the call was accepted. */
function refusal(call: () => unknown): string | undefined {
  try {
    call();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(RouterMessageError);
    return (error as Error).message;
  }
}

describe("a router's messages, checked against the tenant configuration's schema", () => {
  it("acquire: accepted exactly in range, unchanged; refused naming every bad field", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.nat(300), fc.constantFrom<unknown>(-1, 0.5, Number.NaN, "0")),
        ticketish,
        options,
        released,
        handedOff,
        (shard, ticket, opts, rel, hand) => {
          const carried = { released: rel.map((r) => r.slot), handedOff: hand.map((h) => h.slot) };
          const bad = [
            ...(Number.isInteger(shard) && (shard as number) >= 0 ? [] : ["shard"]),
            ...(checkTicket(ticket) ? [] : ["ticket"]),
            ...opts.bad,
            ...rel.flatMap((r, i) => (r.ok ? [] : [`carried.released.${i}`])),
            ...hand.flatMap((h, i) => (h.ok ? [] : [`carried.handedOff.${i}`])),
          ];
          let answer: ReturnType<typeof checkedAcquire> | undefined;
          const error = refusal(() => {
            answer = checkedAcquire(shard, ticket, opts.value, carried);
          });
          const why = `${JSON.stringify([shard, ticket, opts.value, carried])} -> ${error}`;
          if (bad.length === 0) {
            expect(error, why).toBeUndefined();
            expect(answer?.options, why).toBe(opts.value);
            expect(answer?.carried, why).toBe(carried);
            expect([answer?.shard, answer?.ticket], why).toEqual([shard, ticket]);
          } else {
            // Only the first bad argument (in order) is named: each is checked as it is read.
            expect(error, why).toMatch(/^invalid router call: /);
            expect(error, why).toContain(bad[0] as string);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("releaseAll: accepted exactly when every slot is one, unchanged; refused naming the slot", () => {
    fc.assert(
      fc.property(released, handedOff, (rel, hand) => {
        const [r, h] = [rel.map((x) => x.slot), hand.map((x) => x.slot)];
        const bad = [
          ...rel.flatMap((x, i) => (x.ok ? [] : [`released.${i}`])),
          ...hand.flatMap((x, i) => (x.ok ? [] : [`handedOff.${i}`])),
        ];
        let answer: ReturnType<typeof checkedReleaseAll> | undefined;
        const error = refusal(() => {
          answer = checkedReleaseAll(r, h);
        });
        if (bad.length === 0) {
          expect(error).toBeUndefined();
          expect(answer?.released).toBe(r);
          expect(answer?.handedOff).toBe(h);
        } else expect(error).toContain(bad[0] as string);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("a ticket and a shard are checked alone too", () => {
    fc.assert(
      fc.property(ticketish, fc.oneof(fc.nat(), fc.constantFrom<unknown>(-1, 1.5, Number.NaN, null)), (t, s) => {
        expect(refusal(() => checkedTicket(t)) === undefined).toBe(checkTicket(t));
        expect(refusal(() => checkedShard(s)) === undefined).toBe(Number.isInteger(s) && (s as number) >= 0);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('release\'s flag: a boolean or "full", nothing else', () => {
    for (const ok of [false, true, "full"]) expect(checkedReplicaFailed(ok)).toBe(ok);
    for (const bad of ["down", "FULL", "", 0, 1, null, undefined, {}])
      expect(refusal(() => checkedReplicaFailed(bad))).toMatch(/^invalid router call: replicaFailed/);
  });
});
