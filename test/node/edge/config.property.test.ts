import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RETRY_AFTER_POLICIES } from "../../../src/core/retry-after";
import { ConfigError, deploymentConfigSchema, parseConfig, spillwayConfigSchema } from "../../../src/edge/config";
import { LOAD_SOURCES } from "../../../src/edge/replica-probe";
import { replicaUrl } from "../../../src/edge/replica-url";
import { tenantPlanSchema, tenantsSchema } from "../../../src/edge/tenant-config";
import { hashApiKey, resolveTenant } from "../../../src/edge/tenant-resolver";
import { propertyRuns } from "../../support/property-runs";

/**
 * How operators configure spillway (`SPILLWAY_CONFIG`), under arbitrary documents:
 * - any document whose every field lies in its documented range parses; a field written is kept as written, a field
 *   left out takes the schema's default (the default the README's table states: readme-config.test.ts holds the two
 *   equal, through the same JSON Schema read here), and an optional field without a default stays absent;
 * - parsing is idempotent: the parsed result written back as JSON parses to itself, and the JSON string of the
 *   user's document parses as the document does;
 * - one bad value anywhere (out of range, wrong type, an unknown key in a strict object, a replica that is not
 *   http(s), a key that is not 64 lower-case hex digits, a replica listed twice) is refused with a ConfigError whose
 *   message names its path - never accepted, never another exception;
 * - a configured API key resolves to exactly its own plan (whatever the case of the `Bearer` scheme), an unknown one
 *   to the anonymous plan or a 401; the hash is the `sha256sum` digest;
 * - a replica's URL joined with a request path keeps the replica's base path, with exactly one slash between them.
 */

const RUNS = propertyRuns(200, 20261205);

/** A field's documented range: the values a test may write there, and what it must refuse. */
type Range =
  | { t: "int"; min: number; max?: number }
  | { t: "num"; min: number; max?: number; gt?: boolean; nullable?: boolean }
  | { t: "enum"; values: readonly (string | number)[] }
  | { t: "bool" }
  | { t: "name" }
  | { t: "binding" };

const int = (min: number, max?: number): Range => ({ t: "int", min, max });
const num = (min: number, max?: number, gt = false, nullable = false): Range => ({ t: "num", min, max, gt, nullable });
const oneOf = (...values: (string | number)[]): Range => ({ t: "enum", values });
const bool: Range = { t: "bool" };

/** Every field a deployment has (README, "Configuration"; bounds as parse-config.test.ts holds them). */
const DEPLOYMENT: Record<string, Range> = {
  upstreamApiKeySecret: { t: "binding" },
  locationHint: oneOf("wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"),
  maxOngoingRequests: int(1),
  maxQueuedRequests: int(-1),
  queueTimeoutS: num(0, 3600, true),
  leaseTimeoutS: num(0, 86_400, true),
  upstreamTimeoutS: num(0, 3600, true),
  upstreamIdleTimeoutS: num(0, 3600, true),
  slotHandoffMs: int(0, 10_000),
  routerShards: int(1, 256),
  routerUnavailable: oneOf("shed", "pass"),
  tenantHeadroomSlots: int(0),
  "backpressure.statusCode": oneOf(429, 503),
  "backpressure.retryAfterPolicy": oneOf(...RETRY_AFTER_POLICIES),
  "backpressure.retryAfterS": num(0),
  "backpressure.jitter": num(0, 1),
  "estimator.alpha": num(0, 1, true),
  "estimator.intervalS": num(0, 3600, true),
  "estimator.warmupSamples": int(1, 1000),
  "estimator.backoffStreakSaturation": int(1),
  "estimator.occupancyWeight": num(0, 10),
  "estimator.backoffWeight": num(0, 10),
  "booking.queueDelayTargetS": num(0, 3600, true, true),
  "booking.standingIntervalS": num(0, 3600),
  "booking.standingTimeoutS": num(0, 3600, true, true),
  "booking.maxHeldRoomShare": num(0, 1),
  "booking.drainingOfferedShare": num(0, 10, true, true),
  "booking.lastChanceAfterRefusals": { t: "int", min: 1, max: 100, nullable: true } as Range,
  "booking.demoteAfterS": num(0, 3600, true, true),
  "booking.demotedOrder": oneOf("newest_first", "arrival", "next_horizon"),
  "booking.demotedServiceS": num(0, 600, true, true),
  "booking.demotedTimeoutS": num(0, 3600, true, true),
  "booking.demotedQuietTimeoutS": num(0, 3600, true, true),
  "booking.freshOrder": oneOf("arrival", "next_horizon"),
  "booking.demotedShare": num(0, 1),
  "booking.freshNewestShare": num(0, 1),
  "booking.freshNewestWhen": oneOf("always", "standing"),
  "booking.demotedFirstUnderS": num(0, 600, true, true),
  "booking.drainingIgnoresDemoted": bool,
  "booking.forgetRefusalsWhenQueued": bool,
  "booking.freshPastTargetShare": num(0, 10, true, true),
  "booking.sdkClientsLeaveShare": num(0, 0.9),
  "booking.demotedHeadroomSlots": int(0, 10_000),
};
const ROOT: Record<string, Range> = { maxBodyBytes: int(1, 32 * 1024 * 1024), logRejections: bool };
const TENANTS: Record<string, Range> = {
  requireKey: bool,
  kvCacheTtlS: num(0, 3600),
  defaultMaxTokens: int(0),
  quotaLeaseMs: int(0, 10_000),
};
const PLAN: Record<string, Range> = {
  name: { t: "name" },
  weight: num(0, 1000, true),
  priority: oneOf("interactive", "batch"),
  requestsPerMinute: int(1),
  tokensPerMinute: int(1),
  allowPriorityTier: bool,
};
/** Fields the tables above do not draw one by one: drawn as wholes below. */
const WHOLES = new Set(["replicas", "deployments", "tenants", "anonymous", "keys"]);

/** A JSON Schema, as far as this test reads it. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  default?: unknown;
}
const jsonSchemaOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
/** Leaf fields of a schema (dotted), wholes excepted: the tables above must name exactly these. */
function leaves(schema: JsonSchema, prefix = ""): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, field]) =>
    WHOLES.has(key) ? [] : field.properties ? leaves(field, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}
const schemaAt = (schema: JsonSchema, path: string) =>
  path.split(".").reduce<JsonSchema | undefined>((s, k) => s?.properties?.[k], schema);

const SCHEMAS = {
  deployment: jsonSchemaOf(deploymentConfigSchema),
  root: jsonSchemaOf(spillwayConfigSchema),
  tenants: jsonSchemaOf(tenantsSchema),
  plan: jsonSchemaOf(tenantPlanSchema),
};

function valid(range: Range): fc.Arbitrary<unknown> {
  switch (range.t) {
    case "int": {
      const ints = fc.integer({ min: range.min, max: range.max ?? range.min + 1_000_000 });
      return "nullable" in range && range.nullable ? fc.option(ints, { nil: null }) : ints;
    }
    case "num": {
      const max = range.max ?? 1e9;
      const nums = fc.oneof(
        fc.constantFrom(...[range.gt ? undefined : range.min, max].filter((v) => v !== undefined)),
        fc.double({ min: range.min, max, minExcluded: range.gt, noNaN: true, noDefaultInfinity: true }),
      );
      return range.nullable ? fc.option(nums, { nil: null }) : nums;
    }
    case "enum":
      return fc.constantFrom(...range.values);
    case "bool":
      return fc.boolean();
    case "name":
      return fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
    case "binding":
      return fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/);
  }
}

function invalid(range: Range): fc.Arbitrary<unknown> {
  const wrongType = fc.constantFrom<unknown>("1", true, [], {});
  switch (range.t) {
    case "int":
      return fc.oneof(
        wrongType,
        fc.constantFrom<unknown>(range.min - 1, range.min + 0.5, Number.POSITIVE_INFINITY, Number.NaN),
        fc.integer({ min: -1e9, max: range.min - 1 }),
        range.max === undefined ? fc.constant(range.min - 2) : fc.integer({ min: range.max + 1, max: range.max + 1e6 }),
      );
    case "num":
      return fc.oneof(
        wrongType,
        fc.constantFrom<unknown>(
          range.gt ? range.min : range.min - 1e-6,
          Number.POSITIVE_INFINITY,
          Number.NaN,
          ...(range.nullable ? [] : [null]),
        ),
        // Below the range as a number compares: fast-check's doubles below 0 include -0, which is 0 (SEED=22 drew it).
        fc
          .double({ min: -1e9, max: range.min, maxExcluded: !range.gt, noNaN: true, noDefaultInfinity: true })
          .filter((v) => (range.gt ? v <= range.min : v < range.min)),
        range.max === undefined
          ? fc.constant(-1)
          : fc.double({ min: range.max, max: 1e9, minExcluded: true, noNaN: true, noDefaultInfinity: true }),
      );
    case "enum":
      return fc.oneof(
        fc.string().filter((s) => !range.values.includes(s)),
        fc.constantFrom<unknown>(null, 0, 200, "429", true),
      );
    case "bool":
      return fc.constantFrom<unknown>("true", 1, 0, null, "false");
    case "name":
      return fc.constantFrom<unknown>("", "a b", "x".repeat(65), "acmé", "a/b", 7, null);
    case "binding":
      return fc.constantFrom<unknown>("", "1KEY", "my key", "a-b", "é", 3, null);
  }
}

type Fields = Record<string, unknown>;
/** `o[key]`, set to `init()` first where absent. */
function child(o: Fields, key: string, init: () => Fields): Fields {
  if (o[key] === undefined) o[key] = init();
  return o[key] as Fields;
}
/** Flat dotted fields -> the nested object a user writes. */
function nest(flat: Fields): Fields {
  const out: Fields = {};
  for (const [path, value] of Object.entries(flat)) {
    const keys = path.split(".");
    let at = out;
    for (const k of keys.slice(0, -1)) at = child(at, k, () => ({}));
    at[keys.at(-1) as string] = value;
  }
  return out;
}
const has = (o: unknown, path: string) => {
  const keys = path.split(".");
  const parent = keys.slice(0, -1).reduce<unknown>((x, k) => (x as Fields | undefined)?.[k], o);
  return typeof parent === "object" && parent !== null && Object.hasOwn(parent, keys.at(-1) as string);
};
const get = (o: unknown, path: string) => path.split(".").reduce<unknown>((x, k) => (x as Fields | undefined)?.[k], o);

/** Some of a table's fields, each within its range. */
const someOf = (table: Record<string, Range>) =>
  fc
    .record(Object.fromEntries(Object.entries(table).map(([k, r]) => [k, valid(r)])), { requiredKeys: [] })
    .map((flat) => flat as Fields);

/** A plan: its name always, the rest optional. */
const plan = fc.tuple(valid(PLAN.name as Range), someOf(PLAN)).map(([name, rest]) => ({ ...rest, name }) as Fields);
const keyHash = fc.stringMatching(/^[0-9a-f]{64}$/);
const hexLetters = /[a-f]/;

/** A replica's base URL: an http(s) origin, maybe a base path, maybe trailing slashes. */
const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/).filter((s) => s !== "." && s !== "..");
const origin = fc
  .tuple(
    fc.constantFrom("http", "https"),
    fc.oneof(fc.domain(), fc.ipV4()),
    fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined }),
  )
  .map(([scheme, host, port]) => `${scheme}://${host}${port === undefined ? "" : `:${port}`}`);
const base = fc
  .tuple(origin, fc.array(segment, { maxLength: 3 }), fc.integer({ min: 0, max: 3 }))
  .map(([o, segs, slashes]) => ({ origin: o, path: segs.map((s) => `/${s}`).join(""), slashes }));
const baseUrl = (b: { origin: string; path: string; slashes: number }) =>
  `${b.origin}${b.path}${"/".repeat(b.slashes)}`;
/** Where a replica's requests go: its URL without trailing slashes. */
const target = (url: string) => replicaUrl(url, "");

/** A replica entry as written, and what parsing must make of it. */
const replica = fc
  .tuple(
    base,
    fc.oneof(
      fc.constant(undefined),
      fc.record({ load: fc.constantFrom(...LOAD_SOURCES) }, { requiredKeys: [] }),
      // `model` selects `model_name` labels: only the load sources whose metrics carry them take one.
      fc.record(
        {
          load: fc.constantFrom("vllm" as const, "sglang" as const),
          model: fc.string({ minLength: 1, maxLength: 12 }),
        },
        { requiredKeys: ["load"] },
      ),
    ),
  )
  .map(([b, extra]) => {
    const url = baseUrl(b);
    return {
      written: extra === undefined ? url : ({ url, ...extra } as unknown),
      parsed: { url, load: "spillway", ...extra },
    };
  });
const replicas = fc.uniqueArray(replica, { minLength: 1, maxLength: 4, selector: (r) => target(r.parsed.url) });

const deploymentName = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom("llama-3-8b", "m"));

/** A valid document, and the pieces it was drawn from. */
const documentArb = fc
  .record({
    deployments: fc.uniqueArray(fc.tuple(deploymentName, replicas, someOf(DEPLOYMENT)), {
      minLength: 1,
      maxLength: 3,
      selector: ([name]) => name,
    }),
    root: someOf(ROOT),
    tenants: fc.option(
      fc.record({
        fields: someOf(TENANTS),
        anonymous: fc.option(plan, { nil: undefined }),
        keys: fc.option(fc.uniqueArray(fc.tuple(keyHash, plan), { maxLength: 4, selector: ([h]) => h }), {
          nil: undefined,
        }),
      }),
      { nil: undefined },
    ),
  })
  .filter(({ deployments }) => deployments.every(([name]) => name !== "__proto__"))
  .map((d) => {
    const input: Fields = {
      ...nest(d.root),
      deployments: Object.fromEntries(
        d.deployments.map(([name, rs, flat]) => [name, { replicas: rs.map((r) => r.written), ...nest(flat) }]),
      ),
    };
    if (d.tenants) {
      const t: Fields = nest(d.tenants.fields);
      if (d.tenants.anonymous) t.anonymous = d.tenants.anonymous;
      if (d.tenants.keys) t.keys = Object.fromEntries(d.tenants.keys);
      input.tenants = t;
    }
    return { draw: d, input };
  });

/** Each field written is kept; each left out takes its schema default, or stays absent without one. */
function checkFields(parsed: unknown, written: unknown, table: Record<string, Range>, schema: JsonSchema, at: string) {
  for (const path of Object.keys(table)) {
    const where = `${at}${path}`;
    if (has(written, path)) expect(get(parsed, path), where).toEqual(get(written, path));
    else {
      const field = schemaAt(schema, path) as JsonSchema;
      if ("default" in field) expect(get(parsed, path), where).toEqual(field.default);
      else expect(has(parsed, path), `${where} absent`).toBe(false);
    }
  }
}

/** The ConfigError message for `input`; fails if it parses or throws anything else. */
function refusal(input: unknown): string {
  let parsed: unknown;
  try {
    parsed = parseConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(parsed)?.slice(0, 300)}`);
}

const clone = <T>(x: T): T => structuredClone(x);

describe("SPILLWAY_CONFIG under arbitrary documents", () => {
  it("the tables here name every field of the schema (so every field is drawn)", () => {
    expect(Object.keys(DEPLOYMENT).sort()).toEqual(leaves(SCHEMAS.deployment).sort());
    expect(Object.keys(ROOT).sort()).toEqual(leaves(SCHEMAS.root).sort());
    expect(Object.keys(TENANTS).sort()).toEqual(leaves(SCHEMAS.tenants).sort());
    expect(Object.keys(PLAN).sort()).toEqual(leaves(SCHEMAS.plan).sort());
  });

  it("a document within the documented ranges parses: written fields kept, others defaulted; idempotent", () => {
    fc.assert(
      fc.property(documentArb, ({ draw, input }) => {
        const parsed = parseConfig(clone(input));
        checkFields(parsed, input, ROOT, SCHEMAS.root, "");
        expect(Object.keys(parsed.deployments).sort()).toEqual(draw.deployments.map(([n]) => n).sort());
        for (const [name, rs] of draw.deployments) {
          const d = parsed.deployments[name];
          expect(d?.replicas).toEqual(rs.map((r) => r.parsed));
          checkFields(d, (input.deployments as Fields)[name], DEPLOYMENT, SCHEMAS.deployment, `${name}.`);
        }
        const tenants = (input.tenants ?? {}) as Fields;
        checkFields(parsed.tenants, tenants, TENANTS, SCHEMAS.tenants, "tenants.");
        const anonymous = (tenants.anonymous ?? { name: "anonymous" }) as Fields;
        checkFields(parsed.tenants.anonymous, anonymous, PLAN, SCHEMAS.plan, "tenants.anonymous.");
        const keys = (tenants.keys ?? {}) as Record<string, Fields>;
        expect(Object.keys(parsed.tenants.keys).sort()).toEqual(Object.keys(keys).sort());
        for (const [hash, p] of Object.entries(keys))
          checkFields(parsed.tenants.keys[hash], p, PLAN, SCHEMAS.plan, `tenants.keys.${hash}.`);
        // Idempotent: written back, it parses to itself; the document's JSON parses as the document does.
        expect(parseConfig(JSON.stringify(parsed))).toEqual(parsed);
        expect(parseConfig(JSON.stringify(input))).toEqual(parsed);
      }),
      RUNS,
    );
  });

  /** Where a drawn field may be put wrong, with the path its error must name. */
  const scopes = fc.constantFrom("deployment", "root", "tenants", "anonymous", "key");
  it("one value out of its range or of the wrong type is refused, naming its path", () => {
    const pick = fc.constantFrom(...Object.entries({ ...DEPLOYMENT }));
    const pickOf = (table: Record<string, Range>) => fc.constantFrom(...Object.entries(table));
    const bad = scopes.chain((scope) => {
      const table =
        scope === "deployment" ? DEPLOYMENT : scope === "root" ? ROOT : scope === "tenants" ? TENANTS : PLAN;
      return fc.tuple(
        fc.constant(scope),
        (scope === "deployment" ? pick : pickOf(table)).chain(([path, range]) =>
          fc.tuple(fc.constant(path), invalid(range)),
        ),
        keyHash,
      );
    });
    fc.assert(
      fc.property(documentArb, bad, ({ input }, [scope, [path, value], hash]) => {
        const doc = clone(input);
        let parent: Fields;
        let prefix: string;
        if (scope === "deployment") {
          const name = Object.keys(doc.deployments as Fields)[0] as string;
          parent = (doc.deployments as Fields)[name] as Fields;
          prefix = `deployments.${name}.`;
        } else if (scope === "root") {
          parent = doc;
          prefix = "";
        } else {
          const tenants = child(doc, "tenants", () => ({}));
          if (scope === "tenants") {
            parent = tenants;
            prefix = "tenants.";
          } else if (scope === "anonymous") {
            parent = child(tenants, "anonymous", () => ({ name: "anonymous" }));
            prefix = "tenants.anonymous.";
          } else {
            const keys = child(tenants, "keys", () => ({}));
            parent = child(keys, hash, () => ({ name: "k" }));
            prefix = `tenants.keys.${hash}.`;
          }
        }
        const keys = path.split(".");
        let at = parent;
        for (const k of keys.slice(0, -1)) at = child(at, k, () => ({}));
        at[keys.at(-1) as string] = value;
        expect(refusal(doc)).toContain(`${prefix}${path}: `);
      }),
      RUNS,
    );
  });

  it("an unknown key in any strict object is refused, naming the object", () => {
    const spot = fc.constantFrom(
      "",
      "deployment",
      "backpressure",
      "estimator",
      "booking",
      "tenants",
      "anonymous",
      "replica",
    );
    const unknownKey = fc
      .string({ minLength: 1, maxLength: 10 })
      .filter((k) => k !== "__proto__" && !Object.hasOwn(SCHEMAS.root.properties ?? {}, k));
    fc.assert(
      fc.property(documentArb, spot, unknownKey, ({ input }, where, key) => {
        const doc = clone(input);
        const name = Object.keys(doc.deployments as Fields)[0] as string;
        const d = (doc.deployments as Fields)[name] as Fields;
        const tenants = child(doc, "tenants", () => ({}));
        const known = (o: Fields, fields: string[]) => Object.hasOwn(o, key) || fields.includes(key);
        let target: Fields;
        let path: string;
        if (where === "") [target, path] = [doc, "(root)"];
        else if (where === "deployment") [target, path] = [d, `deployments.${name}`];
        else if (where === "tenants") [target, path] = [tenants, "tenants"];
        else if (where === "anonymous")
          [target, path] = [child(tenants, "anonymous", () => ({ name: "a" })), "tenants.anonymous"];
        else if (where === "replica") {
          const rs = d.replicas as unknown[];
          rs[0] = typeof rs[0] === "string" ? { url: rs[0] } : rs[0];
          [target, path] = [rs[0] as Fields, `deployments.${name}.replicas.0`];
        } else [target, path] = [child(d, where, () => ({})), `deployments.${name}.${where}`];
        const schemaFields = [
          ...Object.keys(SCHEMAS.root.properties ?? {}),
          ...Object.keys(SCHEMAS.deployment.properties ?? {}),
          ...Object.keys(SCHEMAS.tenants.properties ?? {}),
          ...Object.keys(SCHEMAS.plan.properties ?? {}),
          ...Object.keys(schemaAt(SCHEMAS.deployment, "booking")?.properties ?? {}),
          ...Object.keys(schemaAt(SCHEMAS.deployment, "estimator")?.properties ?? {}),
          ...Object.keys(schemaAt(SCHEMAS.deployment, "backpressure")?.properties ?? {}),
          "url",
          "load",
          "model",
        ];
        fc.pre(!known(target, schemaFields));
        target[key] = 1;
        const message = refusal(doc);
        expect(message).toContain(`${path}: `);
        expect(message).toContain(`"${key}"`);
      }),
      RUNS,
    );
  });

  it("a replica that is not an http(s) URL, or one listed twice, is refused, naming the replicas", () => {
    const scheme = fc.stringMatching(/^[a-z][a-z0-9+.-]{0,7}$/).filter((s) => s !== "http" && s !== "https");
    const wrong = fc.oneof(
      scheme.map((s) => ({ url: `${s}://gpu.internal:8001`, twice: false })),
      fc.constantFrom("gpu.internal:8001", "/v1", "", "http//x", "javascript:alert(1)").map((url) => ({
        url,
        twice: false,
      })),
      fc.constant({ url: "", twice: true }),
    );
    fc.assert(
      fc.property(documentArb, wrong, fc.boolean(), ({ input }, { url, twice }, asObject) => {
        const doc = clone(input);
        const name = Object.keys(doc.deployments as Fields)[0] as string;
        const rs = ((doc.deployments as Fields)[name] as Fields).replicas as unknown[];
        if (twice) {
          const first = rs[0] as string | Fields;
          const firstUrl = typeof first === "string" ? first : (first.url as string);
          rs.push(asObject ? { url: firstUrl, load: "vllm" } : firstUrl);
          expect(refusal(doc)).toContain(`deployments.${name}.replicas: a replica URL is listed twice`);
        } else {
          rs.push(asObject ? { url, load: "vllm" } : url);
          expect(refusal(doc)).toContain(`deployments.${name}.replicas.${rs.length - 1}`);
        }
      }),
      RUNS,
    );
  });

  it("two replica URLs that reach the same server paths are one replica listed twice", () => {
    // replicaUrl drops a base's trailing slashes: `http://a/llama` and `http://a/llama/` send every request to the
    // same URLs, so listing both counts one server's slots twice.
    fc.assert(
      fc.property(base, fc.integer({ min: 1, max: 3 }), (b, more) => {
        const a = baseUrl(b);
        const again = `${a}${"/".repeat(more)}`;
        expect(target(a)).toBe(target(again));
        expect(refusal({ deployments: { m: { replicas: [a, again] } } })).toContain(
          "deployments.m.replicas: a replica URL is listed twice",
        );
      }),
      RUNS,
    );
  });

  it("a tenant key that is not 64 lower-case hex digits is refused, naming the key", () => {
    const badKey = fc.oneof(
      keyHash.filter((h) => hexLetters.test(h)).map((h) => h.toUpperCase()),
      keyHash.map((h) => h.slice(1)),
      keyHash.map((h) => `${h}0`),
      fc
        .tuple(keyHash, fc.integer({ min: 0, max: 63 }), fc.constantFrom("g", "z", " ", "-", "G"))
        .map(([h, i, c]) => `${h.slice(0, i)}${c}${h.slice(i + 1)}`),
      fc.constant(""),
    );
    fc.assert(
      fc.property(documentArb, badKey, plan, ({ input }, key, p) => {
        const doc = clone(input);
        const tenants = child(doc, "tenants", () => ({}));
        const keys = child(tenants, "keys", () => ({}));
        keys[key] = p;
        expect(refusal(doc)).toContain(`tenants.keys.${key}: `);
      }),
      RUNS,
    );
  });
});

describe("tenant keys resolve to their own plans", () => {
  const apiKey = fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
  it("a configured key resolves to exactly its plan, an unknown one to anonymous or 401", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(apiKey, plan), { minLength: 1, maxLength: 5, selector: ([k]) => k }),
        apiKey,
        fc.boolean(),
        fc.constantFrom("Bearer", "bearer", "BEARER", "bEaReR"),
        async (keyed, stranger, requireKey, scheme) => {
          fc.pre(!keyed.some(([k]) => k === stranger));
          const hashes: Record<string, Fields> = {};
          for (const [key, p] of keyed) {
            const hash = await hashApiKey(key);
            expect(hash).toBe(createHash("sha256").update(key).digest("hex"));
            hashes[hash] = p;
          }
          const { tenants } = parseConfig({
            deployments: { m: { replicas: ["http://127.0.0.1:8001"] } },
            tenants: { requireKey, keys: hashes },
          });
          for (const [key, p] of keyed)
            expect(await resolveTenant(`${scheme} ${key}`, tenants, undefined)).toEqual({
              kind: "tenant",
              plan: tenantPlanSchema.parse(p),
            });
          const unknown = await resolveTenant(`${scheme} ${stranger}`, tenants, undefined);
          if (requireKey) expect(unknown.kind).toBe("unauthorized");
          else expect(unknown).toEqual({ kind: "tenant", plan: tenants.anonymous });
        },
      ),
      RUNS,
    );
  });
});

describe("replica URLs joined with a request path", () => {
  it("keep the base path, with exactly one slash at the join", () => {
    const path = fc
      .tuple(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.option(fc.stringMatching(/^[a-z0-9=&]{0,12}$/), { nil: undefined }),
      )
      .map(([segs, q]) => ({ path: segs.map((s) => `/${s}`).join(""), search: q === undefined ? "" : `?${q}` }));
    fc.assert(
      fc.property(base, path, (b, p) => {
        const joined = replicaUrl(baseUrl(b), `${p.path}${p.search}`);
        expect(joined).toBe(`${b.origin}${b.path}${p.path}${p.search}`);
        const url = new URL(joined);
        expect(url.pathname).toBe(new URL(`${b.origin}${b.path}${p.path}`).pathname);
        expect(url.pathname).not.toContain("//");
        expect(url.search).toBe(p.search === "?" ? "" : p.search);
      }),
      RUNS,
    );
  });
});
