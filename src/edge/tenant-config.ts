import { z } from "zod";
import { problemsText } from "./zod-problems";

/** A SHA-256 digest in lower-case hex: how a key appears in the configuration and in KV (never the key itself). */
export const KEY_HASH = /^[0-9a-f]{64}$/;

/**
 * A tenant's plan: who it is, its share of a deployment under contention, how sheddable its traffic is and its
 * quotas. Validated here; the core trusts it.
 */
export const tenantPlanSchema = z.strictObject({
  /** Shown in metrics, logs and Analytics Engine rows (never the key): letters, digits, `._-`, at most 64. */
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/, "tenant names use letters, digits, '.', '_' and '-'"),
  /** Share of a contended deployment relative to the other tenants waiting there (2 gets twice 1's share). */
  weight: z.number().gt(0).max(1000).default(1),
  /** `batch` is refused first under overload and served from capacity interactive work leaves. */
  priority: z.enum(["interactive", "batch"]).default("interactive"),
  /** Requests per minute, held across the whole edge (a Durable Object per tenant); absent: unlimited. */
  requestsPerMinute: z.int().min(1).optional(),
  /** Tokens per minute (prompt estimate + `max_tokens` at admission, corrected with `usage`); absent: unlimited. */
  tokensPerMinute: z.int().min(1).optional(),
  /** Whether `service_tier: "priority"` is honoured for this tenant (else it is refused with 400). */
  allowPriorityTier: z.boolean().default(false),
});

/** A validated plan. */
export type TenantPlan = z.output<typeof tenantPlanSchema>;
/** A plan as written in the configuration or in KV. */
export type TenantPlanInput = z.input<typeof tenantPlanSchema>;

const ANONYMOUS: TenantPlanInput = { name: "anonymous" };

/** The `tenants` section of the configuration. */
export const tenantsSchema = z.strictObject({
  /** A request without a known key is refused with 401 (true), or served under `anonymous` (false). */
  requireKey: z.boolean().default(false),
  /** The plan of requests without a key (or with an unknown one) when keys are not required. */
  anonymous: tenantPlanSchema.default(tenantPlanSchema.parse(ANONYMOUS)),
  /** SHA-256 (hex) of an API key -> its plan. `printf %s "$KEY" | sha256sum` gives the hash. */
  keys: z
    .record(z.string().regex(KEY_HASH, "keys are SHA-256 digests in lower-case hex"), tenantPlanSchema)
    .default({}),
  /** How long a plan read from the KV binding is kept in the isolate (and an unknown key remembered). */
  kvCacheTtlS: z.number().min(0).max(3600).default(30),
  /** `max_tokens` assumed for a request that sets none, when charging a tokens-per-minute quota. */
  defaultMaxTokens: z.int().min(0).default(1024),
  /**
   * How long a quota lease lasts (ms; 0: none). A tenant whose quotas refill at least 4 requests in this time is
   * granted, beside an admission, a lease of what its quotas refill in it, which the isolate spends without asking
   * the quota object again; smaller tenants are charged request by request.
   */
  quotaLeaseMs: z.int().min(0).max(10_000).default(1000),
});

/** The validated `tenants` section. */
export type TenantsConfig = z.output<typeof tenantsSchema>;

/**
 * A plan record read from KV: validated like the configuration's; `undefined` for anything malformed (a bad
 * record is an unknown key, never a crash), and then `onInvalid` is told why, each problem at its field.
 *
 * @example
 * ```ts
 * parsePlanRecord('{"name":"acme","weight":2}'); // { name: "acme", weight: 2, priority: "interactive", ... }
 * parsePlanRecord("not json", console.error);    // undefined; prints "not JSON: ..."
 * ```
 */
export function parsePlanRecord(
  raw: string | null,
  onInvalid: (problem: string) => void = () => {},
): TenantPlan | undefined {
  if (raw === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    onInvalid(`not JSON: ${(error as Error).message}`);
    return undefined;
  }
  const parsed = tenantPlanSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  onInvalid(problemsText(parsed.error));
  return undefined;
}
