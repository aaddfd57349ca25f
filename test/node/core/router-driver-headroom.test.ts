import { describe, expect, it } from "vitest";
import type { SubmitOptions } from "../../../src/core/router-core";
import { type AcquireResult, RouterDriver } from "../../../src/core/router-driver";
import { TENANT_ACTIVE_WINDOW_MS } from "../../../src/core/tenant-headroom";
import { EventLoop } from "../../../src/sim/event-loop";
import { simRouterIO } from "../../../src/sim/sim-router";
import { routerOptions } from "../../support/router-options";

/** A driver over the event loop: two unprobed two-slot replicas (4 slots), one slot of tenant headroom. */
function setup() {
  const loop = new EventLoop();
  const options = routerOptions({
    replicas: ["r1", "r2"],
    unprobedReplicas: ["r1", "r2"],
    maxOngoingRequests: 2,
    queueTimeoutMs: 60_000,
    tenantHeadroomSlots: 1,
  });
  const driver = new RouterDriver(
    { options, random: () => 0 },
    simRouterIO(loop, { queueLength: () => undefined }, { probeMs: 2 }),
  );
  const answers = new Map<string, { atMs: number; result: AcquireResult }>();
  const acquire = (ticket: string, submit: SubmitOptions) =>
    driver.acquire(ticket, submit, (result) => answers.set(ticket, { atMs: loop.now(), result }));
  const admittedAt = (ticket: string) =>
    answers.get(ticket)?.result.kind === "admitted" ? answers.get(ticket)?.atMs : undefined;
  return { loop, driver, acquire, admittedAt };
}

const A: SubmitOptions = { tenant: "a" };
const B: SubmitOptions = { tenant: "b" };

describe("RouterDriver with tenant headroom", () => {
  it("a light tenant's arrival takes the held slot at once; the heavy one's waits for a release", () => {
    const { loop, driver, acquire, admittedAt } = setup();
    acquire("b0", B);
    for (const t of ["a0", "a1", "a2"]) acquire(t, A);
    loop.run(10);
    expect([admittedAt("b0"), admittedAt("a0"), admittedAt("a1"), admittedAt("a2")]).toEqual([0, 0, 0, undefined]);
    loop.run(50);
    acquire("b1", B); // wakes the held loop
    loop.run(60);
    expect(admittedAt("b1")).toBe(50);
    loop.run(100);
    driver.release("b0"); // one slot free: still b's headroom (b holds 1 of its 2)
    loop.run(150);
    expect(admittedAt("a2")).toBeUndefined();
    loop.run(200);
    driver.release("b1"); // two free: a2 leaves one
    loop.run(250);
    expect(admittedAt("a2")).toBe(200);
  });

  it("a hold ends by itself when the light tenant stays quiet for the activity window", () => {
    const { loop, driver, acquire, admittedAt } = setup();
    for (const t of ["a0", "a1", "a2"]) acquire(t, A);
    loop.run(10);
    acquire("b0", B);
    acquire("a3", A);
    loop.run(100);
    expect([admittedAt("b0"), admittedAt("a3")]).toEqual([10, undefined]);
    driver.release("b0"); // b's last request ends at 100 ms
    loop.run(100 + TENANT_ACTIVE_WINDOW_MS - 1);
    expect(admittedAt("a3")).toBeUndefined();
    loop.run(100 + TENANT_ACTIVE_WINDOW_MS + 10);
    expect(admittedAt("a3")).toBe(100 + TENANT_ACTIVE_WINDOW_MS);
  });
});
