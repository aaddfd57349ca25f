import type { ProbeAnswer } from "../core/router-driver";
import { replicaUrl } from "./replica-url";
import { signedGet } from "./signed-get";

/**
 * Asks a replica for its queue length (`GET /load`) within `deadlineMs`, signed when a secret is set (engines
 * may restrict `/load`). A missed deadline reads as `"timeout"` (slow), any other failure as `undefined`.
 *
 * @example
 * ```ts
 * await probeLoad("http://127.0.0.1:8001", 100, env.SPILLWAY_SIGNING_SECRET); // 3, undefined or "timeout"
 * ```
 */
export async function probeLoad(replica: string, deadlineMs: number, secret: string | undefined): Promise<ProbeAnswer> {
  const deadline = AbortSignal.timeout(deadlineMs);
  try {
    const res = await signedGet(replicaUrl(replica, "/load"), secret, deadline);
    if (!res.ok) return undefined;
    const load = (await res.json()) as { queueLength?: unknown };
    return typeof load.queueLength === "number" ? load.queueLength : undefined;
  } catch {
    return deadline.aborted ? "timeout" : undefined;
  }
}
