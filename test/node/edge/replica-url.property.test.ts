import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { replicaUrl } from "../../../src/edge/replica-url";
import { propertyRuns } from "../../support/property-runs";

/**
 * `replicaUrl` (src/edge/replica-url.ts), which every request forwarded to a replica and every probe of one goes
 * through, for replica URLs with a base path, trailing slashes, a query and a fragment, and request paths with
 * percent-escapes and a query. Held, reading the joined URL back with the WHATWG parser (as `fetch` does):
 *
 * - the origin is the replica's; the path is the replica's base path (its trailing slashes dropped) followed by
 *   the request's path, byte for byte (an escape such as `%2F` or `%3F` stays an escape);
 * - the query is the replica's own (if any) and then the request's, each unchanged (a `/` at the end of the
 *   replica's query is part of it, not a trailing slash); no fragment;
 * - a trailing slash on the replica's URL changes nothing.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(300, 20261206);

const ESCAPES = ["%2F", "%3F", "%23", "%25", "%20", "%2E", "%5C", "%E2%82%AC"];
/** One path segment: never a dot segment (a letter or digit first), with escapes and sub-delimiters in it. */
const segment = fc
  .tuple(
    fc.constantFrom(..."aZ09"),
    fc.array(fc.oneof(fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@"), fc.constantFrom(...ESCAPES)), {
      maxLength: 6,
    }),
  )
  .map(([first, rest]) => first + rest.join(""));
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join("/")}`);
/** A query as `fetch` sends it unchanged: pairs of safe characters and escapes, `/` and `?` included. */
const query = fc
  .array(
    fc
      .tuple(
        fc.stringMatching(/^[a-z0-9_]{1,4}$/),
        fc.array(fc.oneof(fc.constantFrom(..."ab01/?:@-"), fc.constantFrom(...ESCAPES)), { maxLength: 5 }),
      )
      .map(([k, v]) => `${k}=${v.join("")}`),
    { minLength: 1, maxLength: 3 },
  )
  .map((pairs) => pairs.join("&"));

const origin = fc.constantFrom(
  "http://127.0.0.1:8001",
  "https://gpu.example",
  "http://[::1]:9000",
  "https://a.b.example:8443",
);
const replica = fc.record({
  origin,
  basePath: fc.option(path, { nil: "" }),
  slashes: fc.integer({ min: 0, max: 3 }),
  query: fc.option(query, { nil: undefined }),
  fragment: fc.option(fc.constantFrom("", "frag", "a/b?c"), { nil: undefined }),
});
const request = fc.record({ path, query: fc.option(query, { nil: undefined }) });

type Replica = typeof replica extends fc.Arbitrary<infer R> ? R : never;
const spell = (r: Replica) =>
  r.origin +
  r.basePath +
  "/".repeat(r.slashes) +
  (r.query === undefined ? "" : `?${r.query}`) +
  (r.fragment === undefined ? "" : `#${r.fragment}`);

describe("replicaUrl", () => {
  it("joins the replica's base path and query with the request's, unchanged, and drops the fragment", () => {
    fc.assert(
      fc.property(replica, request, (r, req) => {
        const joined = replicaUrl(spell(r), req.path + (req.query === undefined ? "" : `?${req.query}`));
        const url = new URL(joined);
        const why = `${spell(r)} + ${req.path}?${req.query} -> ${joined}`;
        expect(url.origin, why).toBe(new URL(r.origin).origin);
        expect(url.pathname, why).toBe(r.basePath + req.path);
        const queries = [r.query, req.query].filter((q) => q !== undefined);
        expect(url.search, why).toBe(queries.length === 0 ? "" : `?${queries.join("&")}`);
        expect(url.hash, why).toBe("");
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("reads a replica URL with or without trailing slashes alike", () => {
    fc.assert(
      fc.property(replica, request, fc.integer({ min: 1, max: 3 }), (r, req, more) => {
        const p = req.path + (req.query === undefined ? "" : `?${req.query}`);
        expect(replicaUrl(spell({ ...r, slashes: r.slashes + more }), p)).toBe(replicaUrl(spell(r), p));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("regression: a replica URL's query or fragment no longer swallows the request's path", () => {
    // Was "https://gw.example/llama?key=k/load": the probe asked /llama with the query "key=k/load".
    expect(replicaUrl("https://gw.example/llama?key=k", "/load")).toBe("https://gw.example/llama/load?key=k");
    expect(replicaUrl("https://gw.example/llama?key=k", "/v1/completions?x=1")).toBe(
      "https://gw.example/llama/v1/completions?key=k&x=1",
    );
    // Was "https://gw.example/llama#a/v1/completions": fetch sent it to /llama, the path lost in the fragment.
    expect(replicaUrl("https://gw.example/llama#a", "/v1/completions")).toBe("https://gw.example/llama/v1/completions");
    // Was "https://gw.example/llama?next=" + path: the query's own "/" was taken for a trailing slash.
    expect(replicaUrl("https://gw.example/llama?next=/", "/load")).toBe("https://gw.example/llama/load?next=/");
  });
});
