import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deploymentConfigSchema, spillwayConfigSchema } from "../../../src/edge/config";
import { tenantPlanSchema, tenantsSchema } from "../../../src/edge/tenant-config";

/** The part of a JSON Schema this test reads: an object's properties and a field's default. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  default?: unknown;
  enum?: unknown[];
  anyOf?: (JsonSchema & { const?: unknown })[];
  items?: JsonSchema;
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
 * The README's reference tables: each row's field name(s) with the default written beside it (and the whole row).
 * A cell such as "`.estimator.alpha` / `.intervalS`" names fields of one parent, with their defaults "0.3 / 1" in
 * the same order.
 */
function documentedRows(): Map<string, { cell: string; row: string }> {
  const rows = new Map<string, { cell: string; row: string }>();
  // Only the configuration's tables (headed "field | default | meaning"), not the middleware's options or others.
  let inTable = false;
  for (const line of readme.split("\n")) {
    if (!line.startsWith("|")) inTable = false;
    if (line === "| field | default | meaning |") inTable = true;
    if (!inTable) continue;
    const cells = line.split(" | ");
    const first = cells[0]?.replace(/^\| /, "") ?? "";
    if (!/^(plan )?`/.test(first) || cells.length < 3) continue;
    const plan = first.startsWith("plan ") ? "plan " : "";
    const names = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const defaults = (cells[1] ?? "").split(" / ");
    const parent = names[0]?.replace(/[^.]+$/, "") ?? "";
    names.forEach((name, i) => {
      const full = i === 0 || !name.startsWith(".") ? name : `${parent}${name.slice(1)}`;
      rows.set(`${plan}${full}`, { cell: (names.length > 1 ? defaults[i] : cells[1]) ?? "", row: line });
    });
  }
  return rows;
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
  });
});
