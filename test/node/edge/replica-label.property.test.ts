import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { REDACTED, replicaLabel } from "../../../src/edge/replica-label";
import { propertyRuns } from "../../support/property-runs";

/**
 * `replicaLabel` (src/edge/replica-label.ts): the form of a replica's URL that log lines, metrics labels, analytics
 * rows and the overview / stats JSON show. For replica URLs with a userinfo (`user@`, `user:pass@`, `:pass@`) and a
 * query (a gateway's `?key=...`; parameters with and without `=`), each credential spelled with letters no other
 * part of the URL uses, held:
 *
 * - no userinfo and no query value appears in the label, and the URL parser reads none in it (no username or
 *   password; every value `redacted`), while every query parameter's name is kept, in order;
 * - the rest is the URL's own: the parser reads the same scheme, host, port, path and fragment;
 * - a URL with neither userinfo nor query comes back byte for byte (trailing slashes, fragments and all);
 * - a label is its own label (the metrics builder may label what the router already labelled).
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(300, 20261206);

const ESCAPES = ["%2F", "%3F", "%23", "%25", "%20", "%40", "%3A"];
/** A credential: upper-case letters and digits (nothing else in these URLs has upper case), with escapes. */
const secret = fc
  .tuple(
    fc.stringMatching(/^[A-Z][A-Z0-9]{5,9}$/),
    fc.array(fc.oneof(fc.constantFrom(..."-._~!$'()*+,;"), fc.constantFrom(...ESCAPES)), { maxLength: 3 }),
  )
  .map(([letters, rest]) => `K${letters}${rest.join("")}Q`);
const origin = fc.constantFrom(
  "http://127.0.0.1:8001",
  "https://gpu.example",
  "http://[::1]:9000",
  "https://a.b.c:8443",
);
const segment = fc.stringMatching(/^[a-z0-9][a-z0-9._~-]{0,6}$/);
const basePath = fc.array(segment, { maxLength: 3 }).map((s) => s.map((x) => `/${x}`).join(""));
const slashes = fc.integer({ min: 0, max: 2 }).map((n) => "/".repeat(n));
const fragment = fc
  .option(fc.constantFrom("", "frag", "a/b"), { nil: undefined })
  .map((f) => (f === undefined ? "" : `#${f}`));
const userinfo = fc.oneof(
  secret.map((user) => ({ text: `${user}@`, secrets: [user] })),
  fc.tuple(secret, secret).map(([user, pass]) => ({ text: `${user}:${pass}@`, secrets: [user, pass] })),
  secret.map((pass) => ({ text: `:${pass}@`, secrets: [pass] })),
);
/** A parameter: `name=value`, or a bare value (which may be a token itself). */
const param = fc.oneof(
  fc.tuple(fc.stringMatching(/^[a-z_][a-z0-9_]{0,5}$/), secret).map(([name, value]) => ({ name, value })),
  secret.map((value) => ({ name: undefined, value })),
);
const query = fc.array(param, { minLength: 1, maxLength: 3 });

/** A replica URL with its credentials, and the credentials. */
const withCredentials = fc
  .record({
    origin,
    basePath,
    slashes,
    fragment,
    userinfo: fc.option(userinfo, { nil: undefined }),
    query: fc.option(query, { nil: undefined }),
  })
  .filter((r) => r.userinfo !== undefined || r.query !== undefined)
  .map((r) => {
    const [scheme, rest] = r.origin.split("//") as [string, string];
    const q = r.query?.map((p) => (p.name === undefined ? p.value : `${p.name}=${p.value}`)).join("&");
    return {
      url: `${scheme}//${r.userinfo?.text ?? ""}${rest}${r.basePath}${r.slashes}${q === undefined ? "" : `?${q}`}${r.fragment}`,
      secrets: [...(r.userinfo?.secrets ?? []), ...(r.query?.map((p) => p.value) ?? [])],
      names: (r.query ?? []).map((p) => p.name ?? REDACTED),
    };
  });

const plain = fc.oneof(
  fc.tuple(origin, basePath, slashes, fragment).map((parts) => parts.join("")),
  fc.webUrl({ withFragments: true }),
);

describe("replicaLabel", () => {
  it("shows no userinfo and no query value, keeps every parameter's name, and the rest of the URL as it is", () => {
    fc.assert(
      fc.property(withCredentials, ({ url, secrets, names }) => {
        const label = replicaLabel(url);
        const why = `${url} -> ${label}`;
        for (const s of secrets) {
          expect(label, why).not.toContain(s);
          expect(label, why).not.toContain(decodeURIComponent(s));
        }
        const shown = new URL(label);
        expect([shown.username, shown.password], why).toEqual(["", ""]);
        expect([...shown.searchParams.keys()], why).toEqual(names);
        for (const [name, value] of shown.searchParams) expect(name === REDACTED || value === REDACTED, why).toBe(true);
        const real = new URL(url);
        expect([shown.protocol, shown.host, shown.pathname, shown.hash], why).toEqual([
          real.protocol,
          real.host,
          real.pathname,
          real.hash,
        ]);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("gives a URL with no userinfo and no query back byte for byte", () => {
    fc.assert(
      fc.property(plain, (url) => {
        expect(replicaLabel(url)).toBe(url);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("is its own label", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          withCredentials.map((r) => r.url),
          plain,
        ),
        (url) => {
          expect(replicaLabel(replicaLabel(url))).toBe(replicaLabel(url));
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it.each([
    ["a gateway's key", "http://127.0.0.1:8001/r/x?key=secret", "http://127.0.0.1:8001/r/x?key=redacted"],
    ["a user and password", "https://user:pass@gpu.example/llama", "https://gpu.example/llama"],
    [
      "both, no path, a fragment",
      "https://u:p@gw.example?key=k&v&&x=1#f",
      "https://gw.example?key=redacted&redacted&&x=redacted#f",
    ],
    // The URL parser reads a tab inside the userinfo as nothing: still the userinfo.
    ["a tab in the userinfo", "http://u:p\t@h.example/x", "http://h.example/x"],
    // Spellings whose userinfo only the URL parser finds: the parsed URL is written out, redacted.
    ["a tab between the slashes", "http:/\t/u:p@h.example/x", "http://h.example/x"],
    ["no slashes after the scheme", "http:u:p@h.example/x?key=k", "http:h.example/x?key=redacted"],
    ["an empty query", "https://gpu.example/llama?", "https://gpu.example/llama?"],
    ["nothing", "", ""],
  ])("%s", (_, url, label) => {
    expect(replicaLabel(url)).toBe(label);
  });
});
