/** Requests each deployment has forwarded without its router, in this isolate. */
const inFlight = new Map<string, number>();

/**
 * A slot of the per-isolate pass-through budget, for `routerUnavailable: "pass"`: while a deployment's router
 * cannot be reached, an isolate forwards at most `cap` of its requests at once (straight to a replica picked at
 * random), so a router outage degrades into blind routing with a bound instead of an outage or a stampede.
 * Returns the slot's release, or `undefined` when the isolate is at its cap.
 *
 * @example
 * ```ts
 * const release = takePassSlot("llama", 5);
 * if (release) forward(...).finally(release);
 * ```
 */
export function takePassSlot(deployment: string, cap: number): (() => void) | undefined {
  const n = inFlight.get(deployment) ?? 0;
  if (n >= cap) return undefined;
  inFlight.set(deployment, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (inFlight.get(deployment) ?? 1) - 1;
    if (left > 0) inFlight.set(deployment, left);
    else inFlight.delete(deployment);
  };
}
