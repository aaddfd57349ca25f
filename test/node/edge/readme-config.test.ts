import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, deploymentConfigSchema, parseConfig, spillwayConfigSchema } from "../../../src/edge/config";
import { tenantPlanSchema, tenantsSchema } from "../../../src/edge/tenant-config";

/** The part of a JSON Schema this test reads: an object's properties, a field's default, type and bounds. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  default?: unknown;
  enum?: unknown[];
  anyOf?: (JsonSchema & { const?: unknown })[];
  items?: JsonSchema;
  type?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
}

const readme = readFileSync(resolve(import.meta.dirname, "../../../README.md"), "utf8");

/** A zod schema as JSON Schema (what a user writes: input side, transforms left open). */
const jsonSchemaOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;

/**
 * Every field of `schema` as the README names it (`prefix` + dotted path) with its default; objects are recursed
 * into except those listed in `wholes` (documented by one row: a record, a plan, the replicas' entries).
 */
function fieldsOf(schema: JsonSchema, prefix: string, wholes: readonly string[] = []): Map<string, JsonSchema> {
  const out = new Map<string, JsonSchema>();
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    const name = `${prefix}${key}`;
    if (field.properties && !wholes.includes(key)) for (const [k, v] of fieldsOf(field, `${name}.`)) out.set(k, v);
    else out.set(name, field);
  }
  return out;
}

/**
 * The README's reference tables: each row's field name(s) with the default and the range written beside it (and
 * the whole row). A cell such as "`.estimator.alpha` / `.intervalS`" names fields of one parent, with their
 * defaults "0.3 / 1" and their ranges in the same order.
 */
function documentedRows(): Map<string, { cell: string; range: string; row: string }> {
  const rows = new Map<string, { cell: string; range: string; row: string }>();
  // Only the configuration's tables (headed "field | default | range | meaning"), not the middleware's options.
  let inTable = false;
  for (const line of readme.split("\n")) {
    if (!line.startsWith("|")) inTable = false;
    if (line === "| field | default | range | meaning |") inTable = true;
    if (!inTable) continue;
    const cells = line.split(" | ");
    const first = cells[0]?.replace(/^\| /, "") ?? "";
    if (!/^(plan )?`/.test(first) || cells.length < 4) continue;
    const plan = first.startsWith("plan ") ? "plan " : "";
    const names = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const defaults = (cells[1] ?? "").split(" / ");
    const ranges = (cells[2] ?? "").split(" / ");
    const parent = names[0]?.replace(/[^.]+$/, "") ?? "";
    names.forEach((name, i) => {
      const full = i === 0 || !name.startsWith(".") ? name : `${parent}${name.slice(1)}`;
      const [cell, range] = names.length > 1 ? [defaults[i], ranges[i]] : [cells[1], cells[2]];
      rows.set(`${plan}${full}`, { cell: cell ?? "", range: range ?? "", row: line });
    });
  }
  return rows;
}

/** A numeric field's bounds as its schema states them (the number, or the number or `null`, it accepts). */
interface Bounds {
  integer: boolean;
  nullable: boolean;
  low?: { value: number; inclusive: boolean };
  high?: { value: number; inclusive: boolean };
}

/**
 * The bounds of a field that takes a number (alone or beside `null`); `undefined` for any other field (a string,
 * a boolean, an object, or a choice of literals such as `statusCode`). zod writes `z.int()`'s safe-integer range as
 * its bounds where none is set: that is the type (a whole number), not a bound of the configuration.
 */
function boundsOf(field: JsonSchema): Bounds | undefined {
  const options = field.anyOf ?? [field];
  const numbers = options.filter((o) => (o.type === "number" || o.type === "integer") && !("const" in o));
  const number = numbers[0];
  if (numbers.length !== 1 || !number) return undefined;
  const safe = (v: number | undefined) => (v === undefined || Math.abs(v) === Number.MAX_SAFE_INTEGER ? undefined : v);
  const bound = (inclusive: number | undefined, exclusive: number | undefined) =>
    exclusive !== undefined
      ? { value: exclusive, inclusive: false }
      : safe(inclusive) !== undefined
        ? { value: inclusive as number, inclusive: true }
        : undefined;
  return {
    integer: number.type === "integer",
    nullable: options.some((o) => o.type === "null"),
    low: bound(number.minimum, number.exclusiveMinimum),
    high: bound(number.maximum, number.exclusiveMaximum),
  };
}

/**
 * A field's accepted range as the README's "range" column writes it: "integer, 1 to 256", "above 0, at most 3600",
 * "at least 0", with ", or `null`" where `null` is accepted too; a string's length as "1 to 64 characters"; "-"
 * for every other field (its values are named in its row).
 */
function rangeText(field: JsonSchema): string {
  const bounds = boundsOf(field);
  if (!bounds) {
    if (field.type === "string" && field.maxLength !== undefined)
      return `${field.minLength ?? 0} to ${field.maxLength} characters`;
    return "-";
  }
  const { low, high } = bounds;
  const parts =
    low?.inclusive && high?.inclusive
      ? [`${low.value} to ${high.value}`]
      : [
          ...(low ? [`${low.inclusive ? "at least" : "above"} ${low.value}`] : []),
          ...(high ? [`${high.inclusive ? "at most" : "below"} ${high.value}`] : []),
        ];
  if (bounds.integer) parts.unshift("integer");
  if (bounds.nullable) parts.push("or `null`");
  return parts.join(", ");
}

const REPLICAS = ["http://127.0.0.1:8001"];

/**
 * A configuration document with the field the README names `name` set to `value` (a deployment's field in
 * deployment `m`, a plan's in the anonymous plan), and the path of that field in the parsed configuration.
 */
function documentWith(name: string, value: unknown): { document: Record<string, unknown>; path: string[] } {
  const document: Record<string, unknown> = { deployments: { m: { replicas: REPLICAS } } };
  const path = name.startsWith("plan .")
    ? ["tenants", "anonymous", ...name.slice("plan .".length).split(".")]
    : name.startsWith(".")
      ? ["deployments", "m", ...name.slice(1).split(".")]
      : name.split(".");
  if (name.startsWith("plan .")) document.tenants = { anonymous: { name: "anonymous" } };
  let at = document;
  for (const key of path.slice(0, -1)) {
    at[key] ??= {};
    at = at[key] as Record<string, unknown>;
  }
  at[path.at(-1) as string] = value;
  return { document, path };
}

/** Whether parseConfig accepts `value` in the field (and keeps it as written), or refuses it naming the field. */
function accepts(name: string, value: unknown): boolean {
  const { document, path } = documentWith(name, value);
  try {
    const parsed = path.reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], parseConfig(document));
    expect(parsed, `${name} = ${value}`).toEqual(value);
    return true;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.message, `${name} = ${value}`).toContain(`${path.join(".")}: `);
    return false;
  }
}

/**
 * Values on each side of each bound of a field, with whether parseConfig should accept each: for a number, the
 * bound itself and one step past it (1 for an integer, 0.001 otherwise), an integer field's bound plus a half, a far
 * value (1e9) beyond a side the schema leaves open, and `null`; for a string, the longest and shortest lengths and
 * one character past each. None for any other field.
 */
function probesOf(field: JsonSchema): [unknown, boolean][] {
  const bounds = boundsOf(field);
  if (!bounds) {
    if (field.type !== "string" || field.maxLength === undefined) return [];
    const [min, max] = [field.minLength ?? 0, field.maxLength];
    const probes: [unknown, boolean][] = [
      ["a".repeat(min), true],
      ["a".repeat(max), true],
      ["a".repeat(max + 1), false],
    ];
    return min > 0 ? [...probes, ["a".repeat(min - 1), false]] : probes;
  }
  const step = bounds.integer ? 1 : 0.001;
  const { low, high } = bounds;
  const probes: [unknown, boolean][] = [[null, bounds.nullable]];
  if (!low) probes.push([bounds.integer ? -1e9 : -1e9 - 0.5, true]);
  else probes.push([low.value, low.inclusive], [low.inclusive ? low.value - step : low.value + step, !low.inclusive]);
  if (!high) probes.push([bounds.integer ? 1e9 : 1e9 + 0.5, true]);
  else
    probes.push(
      [high.value, high.inclusive],
      [high.inclusive ? high.value + step : high.value - step, !high.inclusive],
    );
  if (bounds.integer) probes.push([(low?.value ?? high?.value ?? 0) + 0.5, false]);
  return probes;
}

/** The values a field takes one of (a zod enum, or a union of literals), if it is such a field. */
function choicesOf(field: JsonSchema): unknown[] | undefined {
  if (field.enum) return field.enum;
  if (field.anyOf?.length && field.anyOf.every((a) => "const" in a)) return field.anyOf.map((a) => a.const);
  return undefined;
}

/** Whether a README default cell says the same as the schema's default. */
function saysDefault(cell: string, field: JsonSchema): boolean {
  const text = cell.replaceAll("`", "").trim();
  if (!("default" in field)) return /^(unset|unlimited|\(required)/.test(text);
  const value = field.default;
  if (value === null) return text.startsWith("null");
  // An object default (a plan, a record) is written as the user would write it, not as parsed: only say something.
  if (typeof value === "object") return text.length > 0;
  return text === String(value) || text.startsWith(`${String(value)} `);
}

describe("README's configuration reference", () => {
  const documented = documentedRows();
  const deployment = fieldsOf(jsonSchemaOf(deploymentConfigSchema), ".", ["replicas"]);
  // The deployments' record is the row `deployments.<model>`; its fields are `deployment`'s.
  const topLevel = new Map(
    [...fieldsOf(jsonSchemaOf(spillwayConfigSchema), "", ["deployments", "tenants"])].map(([name, field]) => [
      name === "deployments" ? "deployments.<model>" : name,
      field,
    ]),
  );
  const tenants = fieldsOf(jsonSchemaOf(tenantsSchema), "tenants.", ["anonymous", "keys"]);
  const plan = fieldsOf(jsonSchemaOf(tenantPlanSchema), "plan .");
  const schemaFields = new Map([...deployment, ...topLevel, ...tenants, ...plan]);

  it("has a row for every field of the configuration, with the schema's default", () => {
    const missing = [...schemaFields.keys()].filter((name) => !documented.has(name));
    expect(missing).toEqual([]);
    const wrongDefault = [...schemaFields].filter(
      ([name, field]) => !saysDefault(documented.get(name)?.cell ?? "", field),
    );
    expect(
      wrongDefault.map(([name, field]) => `${name}: README ${documented.get(name)?.cell}, schema ${field.default}`),
    ).toEqual([]);
  });

  it("names, in a field's row, every value the field takes one of", () => {
    const unnamed = [...schemaFields].flatMap(([name, field]) => {
      const row = documented.get(name)?.row ?? "";
      return (choicesOf(field) ?? [])
        .filter((v) => !row.includes(`\`${String(v)}\``) && !(typeof v === "number" && row.includes(` ${v} `)))
        .map((v) => `${name}: ${String(v)}`);
    });
    expect([...schemaFields.keys()].filter((name) => choicesOf(schemaFields.get(name) ?? {}))).toContain(
      ".backpressure.retryAfterPolicy",
    );
    expect(unnamed).toEqual([]);
  });

  it("names a replica's fields in its row and every `load` in the table of loads", () => {
    const replicas = jsonSchemaOf(deploymentConfigSchema).properties?.replicas?.items?.anyOf ?? [];
    const entry = replicas.find((r) => r.properties)?.properties ?? {};
    const row = documented.get(".replicas")?.row ?? "";
    expect(Object.keys(entry).filter((key) => !row.includes(`"${key}"`))).toEqual([]);
    const loads = [...readme.matchAll(/^\| `([a-z]+)`[^|]*\| `?(GET|none)/gm)].map((m) => m[1]);
    expect(loads).toEqual(entry.load?.enum);
  });

  it("states every field's accepted range in its row, as the schema bounds it", () => {
    const bounded = [...schemaFields].filter(([, field]) => boundsOf(field)).map(([name]) => name);
    expect(bounded).toEqual(
      expect.arrayContaining([".queueTimeoutS", ".routerShards", ".booking.standingTimeoutS", "plan .weight"]),
    );
    const wrong = [...schemaFields].filter(([name, field]) => documented.get(name)?.range !== rangeText(field));
    expect(
      wrong.map(([name, field]) => `${name}: README "${documented.get(name)?.range}", schema "${rangeText(field)}"`),
    ).toEqual([]);
  });

  it("states the ranges parseConfig enforces: each bound where the schema says, no hidden bound on an open side", () => {
    const wrong = [...schemaFields].flatMap(([name, field]) =>
      probesOf(field)
        .filter(([value, ok]) => accepts(name, value) !== ok)
        .map(([value, ok]) => `${name} = ${JSON.stringify(value)}: ${ok ? "refused" : "accepted"}`),
    );
    expect(wrong).toEqual([]);
  });

  it("writes an object's default as a document that parses to the schema's default", () => {
    const read = (name: string, value: unknown) => {
      const { document, path } = documentWith(name, value);
      return path.reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], parseConfig(document));
    };
    const written = [...schemaFields].flatMap(([name, field]): [string, unknown][] => {
      if (typeof field.default !== "object" || field.default === null) return [];
      try {
        return [[name, JSON.parse(documented.get(name)?.cell.replaceAll("`", "") ?? "")]];
      } catch {
        return []; // said in words ("anonymous only"): the row says something, which the first test holds
      }
    });
    expect(written.map(([name]) => name)).toEqual(["tenants.anonymous", "tenants.keys"]);
    for (const [name, value] of written) expect(read(name, value), name).toEqual(read(name, undefined));
  });

  it("documents no field the configuration does not have", () => {
    const stale = [...documented.keys()].filter((name) => !schemaFields.has(name));
    expect(stale).toEqual([]);
  });

  it("reads a row's defaults as the README writes them", () => {
    expect(documented.get(".estimator.intervalS")?.cell).toBe("1");
    expect(documented.get(".estimator.backoffWeight")?.cell).toBe("0.25");
    expect(saysDefault("0 (off)", { default: 0 })).toBe(true);
    expect(saysDefault("10", { default: 1 })).toBe(false);
    expect(saysDefault("`null`", { default: null })).toBe(true);
    expect(saysDefault("unset", {})).toBe(true);
    expect(saysDefault("5", {})).toBe(false);
    expect(documented.get(".estimator.intervalS")?.range).toBe("above 0, at most 3600");
    expect(documented.get(".estimator.warmupSamples")?.range).toBe("integer, 1 to 1000");
    expect(rangeText({ type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER })).toBe("integer, at least 1");
    expect(rangeText({ anyOf: [{ type: "number", exclusiveMinimum: 0, maximum: 600 }, { type: "null" }] })).toBe(
      "above 0, at most 600, or `null`",
    );
    expect(
      rangeText({
        anyOf: [
          { type: "number", const: 429 },
          { type: "number", const: 503 },
        ],
      }),
    ).toBe("-");
    expect(rangeText({ type: "string", minLength: 1, maxLength: 64 })).toBe("1 to 64 characters");
  });
});
