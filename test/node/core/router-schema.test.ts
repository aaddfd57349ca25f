import { describe, expect, it } from "vitest";
import { routerOptionsFromSettings, routerSettingsSchema } from "../../../src/core/router-schema";
import { ConfigError, parseConfig, routerOptionsFor } from "../../../src/edge/config";

describe("the router's settings schema (one source of router defaults)", () => {
  it("fills every default", () => {
    expect(routerOptionsFromSettings(["http://a"], routerSettingsSchema.parse({}))).toEqual({
      replicas: ["http://a"],
      maxOngoingRequests: 5,
      maxQueuedRequests: 100,
      queueTimeoutMs: 30_000,
      leaseTimeoutMs: 600_000,
      statusCode: 429,
      retryAfter: {
        retryAfterPolicy: "booked_capacity",
        retryAfterS: undefined,
        jitter: 0.2,
        saturation: { backoffStreakSaturation: 5, occupancyWeight: 0.25, backoffWeight: 0.25 },
      },
      drainRate: { alpha: 0.3, intervalS: 1, warmupSamples: 3 },
      booking: {
        queueDelayTargetS: 1,
        standingIntervalS: 30,
        maxHeldRoomShare: 0,
        drainingOfferedShare: 1,
        demoteAfterS: 3,
        demotedOrder: "next_horizon",
        demotedTimeoutS: 40,
        demotedQuietTimeoutS: 120,
        freshOrder: "arrival",
        freshNewestShare: 1,
        freshNewestWhen: "standing",
        sdkClientsLeaveShare: 0.05,
      },
      tenantHeadroomSlots: 1,
    });
  });

  it("passes every booking setting through to the router's options, and refuses an unknown order", () => {
    const booking = {
      demotedOrder: "arrival" as const,
      freshOrder: "next_horizon" as const,
      demotedHeadroomSlots: 2,
      lastChanceAfterRefusals: 2,
      demotedShare: 0.25,
      freshNewestShare: 0.5,
      freshNewestWhen: "always" as const,
      sdkClientsLeaveShare: 0.05,
      demotedFirstUnderS: 8,
      drainingIgnoresDemoted: true,
      demotedTimeoutS: 90,
      demotedQuietTimeoutS: 120,
    };
    const options = routerOptionsFromSettings(["r"], routerSettingsSchema.parse({ booking }));
    expect(options.booking).toMatchObject(booking);
    expect(() => routerSettingsSchema.parse({ booking: { freshOrder: "lifo" } })).toThrow();
    // Closing the whole queue to SDK clients would refuse every one of them while a client without headers waits.
    expect(() => routerSettingsSchema.parse({ booking: { sdkClientsLeaveShare: 0.95 } })).toThrow();
  });

  it("is what the edge's configuration applies to a deployment", () => {
    const written = { maxQueuedRequests: 7, queueTimeoutS: 2, backpressure: { retryAfterPolicy: "static" as const } };
    const config = parseConfig({ deployments: { llama: { replicas: ["http://127.0.0.1:8001"], ...written } } });
    expect(routerOptionsFor(config.deployments.llama as NonNullable<typeof config.deployments.llama>)).toEqual({
      ...routerOptionsFromSettings(["http://127.0.0.1:8001"], routerSettingsSchema.parse(written)),
      unprobedReplicas: [],
      routerShards: 1,
    });
  });

  it("the edge passes a deployment's tenant headroom to its router, and refuses a negative one", () => {
    const deployment = { replicas: ["http://127.0.0.1:8001"], tenantHeadroomSlots: 3 };
    const config = parseConfig({ deployments: { llama: deployment } });
    expect(routerOptionsFor(config.deployments.llama as NonNullable<typeof config.deployments.llama>)).toMatchObject({
      tenantHeadroomSlots: 3,
    });
    expect(() => parseConfig({ deployments: { llama: { ...deployment, tenantHeadroomSlots: -1 } } })).toThrow(
      /deployments\.llama\.tenantHeadroomSlots/,
    );
  });

  it("the edge names a bad router setting by its path", () => {
    const bad = { deployments: { llama: { replicas: ["http://127.0.0.1:8001"], estimator: { alpha: 2 } } } };
    expect(() => parseConfig(bad)).toThrow(ConfigError);
    expect(() => parseConfig(bad)).toThrow(/deployments\.llama\.estimator\.alpha/);
  });
});
