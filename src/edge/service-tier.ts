import type { PriorityClass } from "../core/fair-queue";
import type { TenantPlan } from "./tenant-config";

/** A `service_tier` the edge refuses, with the message of its 400. */
export interface ServiceTierProblem {
  message: string;
}

/**
 * The priority class of one request: the plan's, unless the body's OpenAI `service_tier` says otherwise.
 * `auto`/`default` (or none) keep the plan's class, and so does `scale` (OpenAI's tier of reserved capacity, which
 * openai-node's types offer: a deployment's capacity is the operator's, reserved by the plan if by anything);
 * `flex` makes it `batch` (sheddable, served from leftover capacity); `priority` makes it `interactive`, and only
 * where the plan allows it. Anything else is a 400.
 *
 * @example
 * ```ts
 * priorityOf(plan, "flex");     // "batch"
 * priorityOf(plan, "priority"); // { message: ... } unless plan.allowPriorityTier
 * ```
 */
export function priorityOf(plan: TenantPlan, serviceTier: unknown): PriorityClass | ServiceTierProblem {
  if (
    serviceTier === undefined ||
    serviceTier === null ||
    serviceTier === "auto" ||
    serviceTier === "default" ||
    serviceTier === "scale"
  )
    return plan.priority;
  if (serviceTier === "flex") return "batch";
  if (serviceTier === "priority") {
    return plan.allowPriorityTier
      ? "interactive"
      : { message: "service_tier 'priority' is not available for this API key" };
  }
  return { message: "service_tier must be one of 'auto', 'default', 'flex', 'scale' or 'priority'" };
}
