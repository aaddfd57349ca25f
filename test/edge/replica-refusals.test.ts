import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { spillway } from "../../src/edge/middleware";
import type { CarriedSlots, ReleasedSlot } from "../../src/edge/slot-batch";

type Heard =
  | { call: "acquire"; ticket: string; carried: ReleasedSlot[] }
  | { call: "releaseAll"; released: ReleasedSlot[] };

/**
 * The edge in front of a router stub that admits every request to the replica it is told, and whose `releaseAll`
 * calls are delivered only when the test opens `delivery`: a call on another stub of the same Durable Object is
 * not ordered after one made before it (Workers orders calls per stub), so a release sent on its own may reach the
 * router after the acquire sent next. `heard` lists the calls in the order the router received them.
 */
function edge(replicas: string[], fetchReplica: (url: string) => Response | Promise<Response>) {
  const heard: Heard[] = [];
  let open = () => {};
  const delivery = new Promise<void>((resolve) => {
    open = resolve;
  });
  let next = 0;
  const stub = {
    acquire: async (_d: string, _s: number, ticket: string, _o: unknown, carried?: CarriedSlots) => {
      heard.push({ call: "acquire", ticket, carried: [...(carried?.released ?? [])] });
      return { kind: "admitted", replica: replicas[next++ % replicas.length] };
    },
    releaseAll: async (released: ReleasedSlot[]) => {
      await delivery;
      heard.push({ call: "releaseAll", released: [...released] });
      return {};
    },
    cancel: async () => undefined,
  };
  const app = new Hono();
  app.post("/*", spillway({ routers: () => ({ getByName: () => stub }) as never }) as never);
  const env = {
    SPILLWAY_CONFIG: JSON.stringify({
      logRejections: false,
      deployments: { m: { replicas: replicas.map((url) => ({ url, load: "none" })) } },
    }),
  };
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  vi.stubGlobal("fetch", async (input: Request | string) =>
    fetchReplica(typeof input === "string" ? input : input.url),
  );
  return {
    heard,
    send: async () => {
      const res = (await app.fetch(
        new Request("http://edge.example/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}',
        }),
        env,
        ctx as never,
      )) as Response;
      const body = await res.text();
      open();
      for (let i = 0; i < pending.length; i++) await pending[i];
      return { status: res.status, body };
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("a request tried again on another replica", () => {
  const ok = () => new Response('{"ok":true}', { headers: { "content-type": "application/json" } });

  // Both mark the replica down here: a 503 from a replica no probe reads (`load: "none"`) does too.
  for (const [failure, fails] of [
    ["cannot be reached", () => Promise.reject(new TypeError("connection refused"))],
    ["answers 503", () => new Response("draining", { status: 503 })],
  ] as const) {
    it(`after its replica ${failure}: the router hears of the failure before the request's next acquire`, async () => {
      const a = "https://a.example";
      const e = edge([a, "https://b.example"], (url) => (url.startsWith(a) ? fails() : ok()));
      expect((await e.send()).status).toBe(200);
      const acquires = e.heard.filter((h) => h.call === "acquire");
      expect(acquires).toHaveLength(2);
      const first = (acquires[0] as { ticket: string }).ticket;
      // Before: the failed slot's release went out on its own stub, still on its way when the next acquire came
      // (carried nothing), so the router could place the retry on the replica that had just failed.
      const second = e.heard.indexOf(acquires[1] as Heard);
      const known = e.heard
        .slice(0, second + 1)
        .flatMap((h) => (h.call === "acquire" ? h.carried : h.released))
        .filter(([ticket]) => ticket === first);
      expect(known).toEqual([[first, true]]);
    });
  }
});

describe("a replica that answers 401", () => {
  it("is the gateway's credentials, not the client's: 502 upstream_unauthorized, a log line, the slot and the charge given back", async () => {
    const a = "https://a.example";
    const e = edge([a], () =>
      Response.json({ error: { message: "unauthorized", type: "authentication_error" } }, { status: 401 }),
    );
    const lines: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      const { status, body } = await e.send();
      // Before: the replica's 401 passed on, which openai-node raises as AuthenticationError (a bad API key, never
      // retried), while the client's key was never sent to the replica at all.
      expect(status).toBe(502);
      expect(JSON.parse(body)).toMatchObject({ error: { type: "server_error", code: "upstream_unauthorized" } });
      expect(lines.map((l) => JSON.parse(l))).toContainEqual({
        event: "spillway.upstream_unauthorized",
        deployment: "m",
        replica: a,
      });
    } finally {
      spy.mockRestore();
    }
    const ticket = (e.heard.find((h) => h.call === "acquire") as { ticket: string }).ticket;
    // Released as it is: the replica is up, it only refused these credentials.
    expect(e.heard.flatMap((h) => (h.call === "acquire" ? h.carried : h.released))).toContainEqual([ticket, false]);
  });
});
