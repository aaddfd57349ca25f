import { bytesToHex } from "../core/hex";
import {
  parsePlanRecord,
  type TenantPlan,
  type TenantPlanInput,
  type TenantsConfig,
  tenantPlanSchema,
} from "./tenant-config";
import { problemsText } from "./zod-problems";

/** Who is asking: a plan, or a 401 when keys are required and none (or an unknown one) was given. */
export type TenantResolution = { kind: "tenant"; plan: TenantPlan } | { kind: "unauthorized"; message: string };

/** The part of a Workers KV namespace the resolver reads (a test may hand in any object with `get`). */
export interface PlanStore {
  get(key: string): Promise<string | null>;
}

/** One encoder for every key: constructing a TextEncoder per request showed in the Worker's CPU profile. */
const encoder = new TextEncoder();

/** A bearer credential longer than this is not a key (and is never hashed). */
const MAX_KEY_LENGTH = 512;

/**
 * The lower-case hex SHA-256 of an API key (WebCrypto): the only form of a key spillway keeps, compares or
 * looks up. The same as `printf %s "$KEY" | sha256sum`.
 *
 * @example
 * ```ts
 * await hashApiKey("sk-demo-alpha"); // "6f1c..." (64 hex digits)
 * ```
 */
export async function hashApiKey(key: string): Promise<string> {
  return bytesToHex(await crypto.subtle.digest("SHA-256", encoder.encode(key)));
}

/**
 * The key of an `Authorization: Bearer <key>` header: `undefined` without a header, `null` for anything that is
 * not a plausible key (another scheme, empty, too long, spaces or control characters).
 *
 * @example
 * ```ts
 * bearerKey("Bearer sk-demo-alpha"); // "sk-demo-alpha"
 * bearerKey("Basic Zm9v");           // null
 * ```
 */
export function bearerKey(header: string | undefined): string | undefined | null {
  if (header === undefined) return undefined;
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  const key = match?.[1];
  return key !== undefined && key.length <= MAX_KEY_LENGTH ? key : null;
}

/**
 * How long a KV read in flight is shared with later lookups of its key. A read whose request was cancelled may never
 * settle; past this a lookup reads again (KV answers in milliseconds: a read this old is lost, not slow).
 */
export const PLAN_READ_STALE_MS = 10_000;

/** A lookup's answer kept in the isolate: the plan (`undefined`: KV does not know the key) and when it expires. */
type CachedPlan = { plan: TenantPlan | undefined; expiresAtMs: number };

/**
 * Plans read from KV, kept in the isolate for a short time: a key seen again within the TTL costs no KV read,
 * and an unknown key (no record, or a malformed one) is remembered for the TTL too, so a bad key repeated does not
 * become a flood of reads. Every new key costs one read, and no more when many requests ask for it at once: the
 * lookups of a key not yet cached share one read in flight (a burst of a new customer is one KV read). A read
 * that fails fails each lookup waiting on it and is not remembered: the next lookup reads again.
 *
 * Bounded, known and unknown keys apart: at most `maxEntries` plans and `maxUnknownEntries` unknown keys; in each,
 * the entry read longest ago leaves first. A flood of distinct bad keys only cycles the unknown keys, never
 * pushing a known tenant out (each such key still costs its one read).
 *
 * Reads in flight are shared for at most {@link PLAN_READ_STALE_MS}, and at most `maxUnknownEntries` of them at
 * once (the oldest stops being shared first): a read started by a request that was cancelled meanwhile may never
 * settle (workerd drops that request's I/O), and must neither hold every later lookup of its key nor stay
 * remembered. A lookup of a key whose read is no longer shared reads again.
 *
 * @example
 * ```ts
 * const cache = new PlanCache(1024, 256); // 1024 plans, 256 unknown keys
 * const plan = await cache.get(env.SPILLWAY_TENANT_KEYS, hash, Date.now(), 30_000); // undefined: unknown key
 * ```
 */
export class PlanCache {
  private readonly plans = new Map<string, CachedPlan>();
  private readonly unknown = new Map<string, CachedPlan>();
  /** Reads in flight, by hash, oldest first: each read and when it started. */
  private readonly reading = new Map<string, { read: Promise<TenantPlan | undefined>; sinceMs: number }>();

  constructor(
    private readonly maxEntries = 4096,
    private readonly maxUnknownEntries = Math.min(1024, maxEntries),
  ) {}

  async get(store: PlanStore, hash: string, nowMs: number, ttlMs: number): Promise<TenantPlan | undefined> {
    const cached = this.plans.get(hash) ?? this.unknown.get(hash);
    if (cached && cached.expiresAtMs > nowMs) return cached.plan;
    const inFlight = this.reading.get(hash);
    if (inFlight && nowMs - inFlight.sinceMs < PLAN_READ_STALE_MS) return inFlight.read;
    // Reads too old to share leave (the oldest first), and so does the oldest past the bound.
    for (const [old, { sinceMs }] of this.reading) {
      if (nowMs - sinceMs < PLAN_READ_STALE_MS && this.reading.size < this.maxUnknownEntries) break;
      this.reading.delete(old);
    }
    const read = this.read(store, hash, nowMs + ttlMs);
    this.reading.delete(hash);
    this.reading.set(hash, { read, sinceMs: nowMs });
    // Registered before any caller awaits `read`, so the read is forgotten before anyone sees it settle.
    const forget = () => {
      if (this.reading.get(hash)?.read === read) this.reading.delete(hash);
    };
    read.then(forget, forget);
    return read;
  }

  /** KV reads in flight whose answer a lookup of the same key would share (at most `maxUnknownEntries`). */
  get readsInFlight(): number {
    return this.reading.size;
  }

  private async read(store: PlanStore, hash: string, expiresAtMs: number): Promise<TenantPlan | undefined> {
    // A record there that is not a plan refuses its key as unknown: the operator who wrote it is told why (once
    // per read, so at most once per TTL per isolate), by the hash's first 8 digits, never the whole hash.
    const plan = parsePlanRecord(await store.get(hash), (message) =>
      console.error(
        JSON.stringify({ event: "spillway.tenant_record_invalid", keyHashPrefix: hash.slice(0, 8), message }),
      ),
    );
    this.plans.delete(hash);
    this.unknown.delete(hash);
    const [entries, max] = plan ? [this.plans, this.maxEntries] : [this.unknown, this.maxUnknownEntries];
    entries.set(hash, { plan, expiresAtMs });
    if (entries.size > max) entries.delete(entries.keys().next().value as string);
    return plan;
  }
}

const isolateCache = new PlanCache();

/**
 * Resolves the tenant of a request from its `Authorization` header: the key's SHA-256 is looked up in the
 * configuration's `tenants.keys`, then in the KV store (if bound). A request without a key, or with an unknown or
 * malformed one, is the anonymous tenant, or a 401 when `tenants.requireKey` is set. The raw key never leaves
 * this function.
 *
 * @example
 * ```ts
 * const who = await resolveTenant(c.req.header("authorization"), config.tenants, env.SPILLWAY_TENANT_KEYS);
 * if (who.kind === "unauthorized") return openAIError(401, who.message, "invalid_request_error", "invalid_api_key");
 * ```
 */
export async function resolveTenant(
  authorization: string | undefined,
  tenants: TenantsConfig,
  store: PlanStore | undefined,
  nowMs: number = Date.now(),
  cache: PlanCache = isolateCache,
): Promise<TenantResolution> {
  const key = bearerKey(authorization);
  if (typeof key === "string") {
    const hash = await hashApiKey(key);
    const plan =
      (Object.hasOwn(tenants.keys, hash) ? tenants.keys[hash] : undefined) ??
      (store ? await cache.get(store, hash, nowMs, tenants.kvCacheTtlS * 1000) : undefined);
    if (plan) return { kind: "tenant", plan };
  }
  if (!tenants.requireKey) return { kind: "tenant", plan: tenants.anonymous };
  const message =
    key === undefined
      ? "You didn't provide an API key. Provide it in the Authorization header (Bearer auth)."
      : "Incorrect API key provided.";
  return { kind: "unauthorized", message };
}

/**
 * The resolution of a plan an operator's own resolver returned (e.g. from their auth middleware's context):
 * validated like a configured plan; `undefined` is an unknown caller (anonymous, or 401 when keys are required).
 *
 * @example
 * ```ts
 * resolvedPlan({ name: "acme", weight: 2 }, config.tenants); // { kind: "tenant", plan: { name: "acme", ... } }
 * ```
 */
export function resolvedPlan(plan: TenantPlanInput | undefined, tenants: TenantsConfig): TenantResolution {
  if (plan === undefined) {
    return tenants.requireKey
      ? { kind: "unauthorized", message: "The request's credentials do not name a tenant." }
      : { kind: "tenant", plan: tenants.anonymous };
  }
  const parsed = tenantPlanSchema.safeParse(plan);
  if (!parsed.success) throw new Error(`spillway(): tenantOf returned an invalid plan: ${problemsText(parsed.error)}`);
  return { kind: "tenant", plan: parsed.data };
}
