import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QUEUE_LENGTH_STALE_MS } from "../../../src/core/queue-length-cache";
import { promValue, type ReplicaLoad, replicaLoad } from "../../../src/edge/replica-load";
import { type MetricsReading, type ProbeAnswer, probeReplica, readMetrics } from "../../../src/edge/replica-probe";
import { escapeLabelValue as escapeLabel, spellValue as spell } from "../../support/prometheus-spelling";
import { propertyRuns } from "../../support/property-runs";

/**
 * How the router (`probeReplica`, `readMetrics`) and the dashboard (`replicaLoad`, `promValue`) read a replica's
 * load, against a model written here from the documented contract (README, "In front of vLLM / SGLang / TGI", and
 * the modules' JSDoc):
 *
 * - queue length = running + waiting, every label set of each gauge summed (vLLM's `engine`s, SGLang's `dp_rank`s),
 *   with `model` only the samples labelled `model_name="<model>"`; token usage = the mean of the first usage gauge
 *   that has a sample in 0..1 (vLLM's new name before the old one): a usage outside 0..1, NaN or ±Inf is none;
 * - unknown (`undefined`), never idle, when a gauge is missing, any of its samples is older than the stale limit,
 *   or any of its samples is not a count (NaN, ±Inf, negative) or the total overflows;
 * - the page is strict Prometheus text: cut off, a non-numeric value, a garbage line, OpenMetrics-only syntax ->
 *   unknown;
 * - over HTTP: a missed deadline (no headers, or a body that stalls) is `"timeout"`, a network error, a non-2xx
 *   answer, a page served from a cache (`Age` over 10 s) or an unreadable `/load` is `undefined`; a `/load` answer
 *   is read as a queue length only when it is a count (finite, >= 0): anything else must not read as a free replica;
 * - the dashboard's `replicaLoad` never throws, reads the same figures (a token usage outside 0..1, from `/load` or
 *   `/metrics`, is unknown: null), and `promValue` is the value of the first sample of a name with a finite value.
 *
 * Pages are generated with random extra metrics (near-miss names, the other servers' gauges, histograms), label
 * sets in any order with values full of the format's punctuation and escapes, HELP/TYPE/free comments and blank
 * lines anywhere, blanks and tabs between tokens, `\r\n` or `\n` line ends, several value spellings, and sample
 * timestamps fresh, at the stale limit and past it. The Prometheus parser itself has its own property test
 * (prometheus-text.property.test.ts); this one holds what is built on it.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(150, 20261214);
const NOW = 1_750_000_000_000;
const STALE = QUEUE_LENGTH_STALE_MS;

type Kind = "vllm" | "sglang" | "tgi";
const KINDS: readonly Kind[] = ["vllm", "sglang", "tgi"];

/** The gauges of README's table, written here independently of replica-probe.ts. */
const QUEUE: Record<Kind, readonly string[]> = {
  vllm: ["vllm:num_requests_running", "vllm:num_requests_waiting"],
  sglang: ["sglang:num_running_reqs", "sglang:num_queue_reqs"],
  tgi: ["tgi_queue_size", "tgi_batch_current_size"],
};
const USAGE: Record<Kind, readonly string[]> = {
  vllm: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
  sglang: ["sglang:token_usage"],
  tgi: [],
};
/** The label that tells a server's series apart (vLLM's data-parallel engine, SGLang's dp_rank). */
const INDEX_LABEL: Record<Kind, string> = { vllm: "engine", sglang: "dp_rank", tgi: "shard" };

const MODELS = ["m", "meta-llama/Llama-3.1-8B-Instruct", 'we"ird\\na}me,=\n', ""] as const;

// ---------------------------------------------------------------------------------------------------------------
// Pages.

interface Layout {
  lead: string;
  /** Blanks between the name and `{`. */
  afterName: string;
  inner: string;
  /** Blanks before the value (at least one where there is no label set). */
  beforeValue: string;
  beforeTimestamp: string;
  trail: string;
  trailingComma: boolean;
  /** Write `{}` for a sample without labels. */
  emptyBraces: boolean;
  spelling: number;
  eol: "\n" | "\r\n";
}

interface Series {
  name: string;
  labels: [string, string][];
  value: number;
  timestampMs?: number;
  layout: Layout;
  /** Written in place of the value (a corrupted page). */
  rawValue?: string;
  /** Written after the sample (a corrupted page). */
  suffix?: string;
}

type Comment = { text: string; eol: "\n" | "\r\n" };
type Line = { series: Series } | { comment: Comment };

interface Page {
  kind: Kind;
  lines: Line[];
}

const blanks = (min: number) => fc.string({ unit: fc.constantFrom(" ", "\t"), minLength: min, maxLength: 3 });
const eol = fc.constantFrom<"\n" | "\r\n">("\n", "\n", "\r\n");

const layout: fc.Arbitrary<Layout> = fc.record({
  lead: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: blanks(1) }),
  afterName: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: blanks(1) }),
  inner: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: blanks(1) }),
  beforeValue: blanks(1),
  beforeTimestamp: blanks(1),
  trail: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: blanks(1) }),
  trailingComma: fc.boolean(),
  emptyBraces: fc.boolean(),
  spelling: fc.nat({ max: 5 }),
  eol,
});

/** Label values with the format's punctuation, its three escapes and a few non-ASCII characters. */
const labelValue = fc.string({
  unit: fc.constantFrom("a", "0", " ", "\t", '"', "\\", "\n", "{", "}", ",", "=", "#", "é", "😀", "\u2028"),
  maxLength: 6,
});

/** Counts as servers write them (integers, mostly), and a few fractions. */
const count = fc.oneof(
  { weight: 5, arbitrary: fc.nat({ max: 300 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0) },
);

/** Anything a gauge may carry: counts, and values no count can take. */
const anyValue = fc.oneof(
  { weight: 6, arbitrary: count },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -1,
      -0.5,
      -1e-300,
      -Number.MAX_VALUE,
      Number.MAX_VALUE,
      1e308,
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: -50, max: -1 }) },
);

const usageValue = fc.oneof(
  { weight: 5, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY) },
  // Out of range: no fraction of a cache (a percent exported by mistake, a negative).
  { weight: 1, arbitrary: fc.constantFrom(-0.5, -1e-300, 1.0000001, 1.5, 42, -Number.MAX_VALUE) },
);

/** No timestamp (as servers write them), fresh, exactly at the stale limit, or older. */
const timestamp = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.integer({ min: -5_000, max: STALE }).map((age) => NOW - age) },
  { weight: 1, arbitrary: fc.constant(NOW - STALE) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 1e9 }).map((extra) => NOW - STALE - extra) },
);

const otherLabels = fc.uniqueArray(
  fc.tuple(fc.constantFrom("engine_type", "tp_rank", "pp_rank", "le", "x", "constructor", "__proto__"), labelValue),
  { selector: ([l]) => l, maxLength: 3 },
);

/** The series of one gauge: each with its index label (when there are several), maybe `model_name`, others. */
function gaugeSeries(
  kind: Kind,
  name: string,
  values: fc.Arbitrary<number>,
  maxSeries: number,
  timestamps = timestamp,
): fc.Arbitrary<Series[]> {
  const one = fc.record({
    model: fc.option(fc.constantFrom(...MODELS), { nil: undefined, freq: 3 }),
    others: otherLabels,
    value: values,
    timestampMs: timestamps,
    layout,
    order: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  });
  return fc.array(one, { maxLength: maxSeries }).map((drawn) =>
    drawn.map((d, i): Series => {
      const labels: [string, string][] = d.others.filter(([l]) => l !== INDEX_LABEL[kind]);
      if (d.model !== undefined) labels.push(["model_name", d.model]);
      if (kind !== "tgi" || drawn.length > 1) labels.push([INDEX_LABEL[kind], String(i)]);
      // Any order of the labels.
      const keyed = labels.map((l, j) => [d.order[j % d.order.length] ?? 0, j, l] as const);
      keyed.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const series: Series = { name, labels: keyed.map(([, , l]) => l), value: d.value, layout: d.layout };
      if (d.timestampMs !== undefined) series.timestampMs = d.timestampMs;
      return series;
    }),
  );
}

/** Metrics a page holds besides the gauges read: near misses, the other servers' gauges, histograms, others. */
function extraNames(kind: Kind): string[] {
  const read = [...QUEUE[kind], ...USAGE[kind]];
  return [
    ...read.flatMap((n) => [`${n}_total`, `${n}_created`, n.slice(0, -1), `${n}:x`, `_${n}`]),
    ...KINDS.filter((k) => k !== kind).flatMap((k) => [...QUEUE[k], ...USAGE[k]]),
    "vllm:num_requests_swapped",
    "vllm:e2e_request_latency_seconds_bucket",
    "sglang:num_grammar_queue_reqs",
    "sglang:num_retracted_requests_total",
    "sglang:gen_throughput",
    "tgi_batch_current_max_tokens",
    "python_gc_objects_collected_total",
    "process_resident_memory_bytes",
  ];
}

const comment = (kind: Kind): fc.Arbitrary<Comment> =>
  fc.record({
    text: fc.oneof(
      fc
        .tuple(fc.constantFrom(...QUEUE[kind], ...extraNames(kind)), fc.string({ maxLength: 12 }))
        .map(([n, t]) => `# HELP ${n} ${t.replace(/\\/g, "\\\\").replace(/[\r\n]/g, "\\n")}`),
      fc.constantFrom(...QUEUE[kind]).map((n) => `# TYPE ${n} gauge`),
      // A comment that looks like a sample of a gauge read: never counted.
      fc.constantFrom(...QUEUE[kind]).map((n) => `# ${n} 99`),
      fc.constantFrom(...QUEUE[kind]).map((n) => `#${n} 7`),
      fc.constantFrom("#", "# EOF", ""),
      blanks(1),
    ),
    eol,
  });

/** A page of `kind`: the gauges read (with `queueValues`), usage gauges, extras and comments, in any order. */
function pageOf(
  kind: Kind,
  queueValues: fc.Arbitrary<number> = anyValue,
  options: { minSeries?: number; timestamps?: fc.Arbitrary<number | undefined> } = {},
): fc.Arbitrary<Page> {
  const timestamps = options.timestamps ?? timestamp;
  const queue = QUEUE[kind].map((name) =>
    gaugeSeries(kind, name, queueValues, 3, timestamps).filter((s) => s.length >= (options.minSeries ?? 0)),
  );
  const usage = USAGE[kind].map((name) => gaugeSeries(kind, name, usageValue, 2, timestamps));
  const extras = fc
    .array(fc.tuple(fc.constantFrom(...extraNames(kind)), anyValue), { maxLength: 6 })
    .chain((names) =>
      fc.tuple(...names.map(([name, value]) => gaugeSeries(kind, name, fc.constant(value), 1, timestamps))),
    )
    .map((lists) => lists.flat());
  return fc
    .record({
      queue: fc.tuple(...queue),
      usage: fc.tuple(...usage),
      extras,
      comments: fc.array(comment(kind), { maxLength: 6 }),
    })
    .chain(({ queue, usage, extras, comments }) => {
      const lines: Line[] = [
        ...[...queue.flat(), ...usage.flat(), ...extras].map((series) => ({ series })),
        ...comments.map((c) => ({ comment: c })),
      ];
      return fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length });
    })
    .map((lines) => ({ kind, lines }));
}

function sampleLine(s: Series): string {
  const { lead, afterName, inner, beforeValue, beforeTimestamp, trail, trailingComma, emptyBraces } = s.layout;
  const braced = s.labels.length > 0 || emptyBraces;
  const labels = braced
    ? `${afterName}{${inner}${s.labels
        .map(([l, v]) => `${l}${inner}=${inner}"${escapeLabel(v)}"`)
        .join(`${inner},${inner}`)}${trailingComma && s.labels.length > 0 ? "," : ""}${inner}}`
    : "";
  const value = s.rawValue ?? spell(s.value, s.layout.spelling);
  const ts = s.timestampMs === undefined ? "" : `${beforeTimestamp}${s.timestampMs}`;
  return `${lead}${s.name}${labels}${beforeValue}${value}${ts}${s.suffix ?? ""}${trail}`;
}

function render(page: Page): string {
  return page.lines
    .map((line) =>
      "series" in line ? sampleLine(line.series) + line.series.layout.eol : line.comment.text + line.comment.eol,
    )
    .join("");
}

const seriesOf = (page: Page): Series[] => page.lines.flatMap((l) => ("series" in l ? [l.series] : []));

// ---------------------------------------------------------------------------------------------------------------
// The model.

const isCount = (v: number) => Number.isFinite(v) && v >= 0;
/** A token usage: a fraction of the cache. */
const isFraction = (v: number) => v >= 0 && v <= 1;

/** What `readMetrics` must return for a page (README's table and rules). */
function expectedReading(page: Page, model: string | undefined, nowMs = NOW): MetricsReading | undefined {
  const samples = seriesOf(page);
  const counted = (s: Series, name: string) =>
    s.name === name && (model === undefined || s.labels.some(([l, v]) => l === "model_name" && v === model));
  let queueLength = 0;
  for (const name of QUEUE[page.kind]) {
    const used = samples.filter((s) => counted(s, name));
    if (used.length === 0) return undefined; // a partial page is not an idle replica
    if (used.some((s) => s.timestampMs !== undefined && nowMs - s.timestampMs > STALE)) return undefined;
    if (!used.every((s) => isCount(s.value))) return undefined; // NaN, ±Inf or negative: no count
    queueLength += used.reduce((total, s) => total + s.value, 0);
  }
  if (!Number.isFinite(queueLength)) return undefined;
  let tokenUsage: number | null = null;
  for (const name of USAGE[page.kind]) {
    const used = samples.filter((s) => counted(s, name) && isFraction(s.value));
    if (used.length === 0) continue;
    tokenUsage = used.reduce((total, s) => total + s.value, 0) / used.length;
    break;
  }
  return { queueLength, tokenUsage };
}

/** `promValue`: the first sample of `name`, in page order, with a finite value. */
function expectedPromValue(page: Page, name: string): number | null {
  return seriesOf(page).find((s) => s.name === name && Number.isFinite(s.value))?.value ?? null;
}

const close = (a: number, b: number) => Object.is(a, b) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function expectReading(got: MetricsReading | undefined, want: MetricsReading | undefined, text: string) {
  const why = `page:\n${JSON.stringify(text)}\nread ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  if (want === undefined || got === undefined) {
    expect(got, why).toEqual(want);
    return;
  }
  expect(close(got.queueLength, want.queueLength), why).toBe(true);
  if (want.tokenUsage === null || got.tokenUsage === null) expect(got.tokenUsage, why).toBe(want.tokenUsage);
  else expect(close(got.tokenUsage, want.tokenUsage), why).toBe(true);
}

const kindArb = fc.constantFrom(...KINDS);
/** Half of them readable (every gauge present, counts only), so that the HTTP layer's cases meet readable pages. */
const mostlyReadable = (kind: Kind) => fc.oneof(pageOf(kind, count, { minSeries: 1 }), pageOf(kind));
const modelArb = fc.option(fc.constantFrom(...MODELS), { nil: undefined, freq: 2 });

// ---------------------------------------------------------------------------------------------------------------
// readMetrics.

describe("readMetrics (the router's reading of a /metrics page)", () => {
  it("reads exactly the model's queue length and token usage, or unknown where the model says so", () => {
    fc.assert(
      fc.property(
        kindArb.chain((kind) => pageOf(kind)),
        modelArb,
        (page, model) => {
          const text = render(page);
          const got = readMetrics(page.kind, text, { model, nowMs: NOW });
          expectReading(got, expectedReading(page, model), text);
          // Whatever the page, a reading is a count: never negative, never NaN or infinite.
          if (got !== undefined) expect(isCount(got.queueLength)).toBe(true);
        },
      ),
      { numRuns: RUNS * 4, seed: SEED },
    );
  });

  it("reads a page of counts only, with every gauge present, as the sum over every label set", () => {
    fc.assert(
      fc.property(
        kindArb.chain((kind) => pageOf(kind, count, { minSeries: 1, timestamps: fc.constant(undefined) })),
        (page) => {
          const text = render(page);
          const want = expectedReading(page, undefined);
          expect(want).toBeDefined();
          expectReading(readMetrics(page.kind, text, { nowMs: NOW }), want, text);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  const CORRUPTIONS = ["cut", "value", "line", "exemplar", "label"] as const;
  const GARBAGE_VALUES = [
    "abc",
    "1,5",
    "0x1A",
    "1_000",
    "",
    "--1",
    "1e",
    ".",
    "1.2.3",
    "Infinity",
    "nan",
    "½",
    "3 4 5",
  ];
  const GARBAGE_LINES = [
    "<html>upstream down</html>",
    "vllm:num_requests_running{",
    "}",
    "nonsense line here",
    'x{a="b} 1',
    'x{a="\\x"} 1',
    "x{a=b} 1",
    "9x 1",
  ];

  it("reads a readable page made unreadable anywhere (cut, bad value, garbage line, exemplar, bad label) as unknown", () => {
    fc.assert(
      fc.property(
        kindArb.chain((kind) => pageOf(kind, count, { minSeries: 1, timestamps: fc.constant(undefined) })),
        fc.constantFrom(...CORRUPTIONS),
        fc.nat(),
        fc.constantFrom(...GARBAGE_VALUES),
        fc.constantFrom(...GARBAGE_LINES),
        (drawn, corruption, at, garbageValue, garbageLine) => {
          const page = structuredClone(drawn); // fast-check may replay the drawn value: corrupt a copy
          expect(expectedReading(page, undefined)).toBeDefined();
          const gauges = seriesOf(page).filter((s) => QUEUE[page.kind].includes(s.name));
          const target = gauges[at % gauges.length] as Series;
          let text: string;
          if (corruption === "cut") {
            const full = render(page);
            const end = at % full.length;
            fc.pre(end > 0 && full[end - 1] !== "\n");
            text = full.slice(0, end);
          } else if (corruption === "value") {
            target.rawValue = garbageValue;
            text = render(page);
          } else if (corruption === "line") {
            page.lines.splice(at % (page.lines.length + 1), 0, { comment: { text: garbageLine, eol: "\n" } });
            text = render(page);
          } else if (corruption === "exemplar") {
            // OpenMetrics only; a text 0.0.4 page has none (servers send them only when asked for OpenMetrics).
            target.suffix = ' # {trace_id="abc"} 1.0';
            text = render(page);
          } else {
            target.labels = [...target.labels, ["dup", "a"], ["dup", "b"]];
            text = render(page);
          }
          expect(readMetrics(page.kind, text, { nowMs: NOW }), JSON.stringify(text)).toBeUndefined();
        },
      ),
      { numRuns: RUNS * 2, seed: SEED },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Over HTTP: probeReplica and replicaLoad, with `fetch` stubbed.

type Answer =
  | { kind: "network" }
  | { kind: "hang" }
  | { kind: "stall" }
  | { kind: "http"; status: number; age?: string; body: string };

const OK_STATUSES = [200, 201, 203, 299];
const BAD_STATUSES = [301, 400, 401, 403, 404, 429, 500, 502, 503];
const SLOW_DEADLINE_MS = 15;
const DEADLINE_MS = 5_000;

/** Stubs `fetch` with `answer(path)`; a hanging or stalling answer gives up when the caller's signal aborts. */
function stubFetch(answer: (path: string) => Answer, calls: string[] = []): void {
  vi.stubGlobal("fetch", async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const path = new URL(String(input)).pathname;
    calls.push(path);
    const signal = init?.signal as AbortSignal;
    const a = answer(path);
    if (a.kind === "network") throw new TypeError("fetch failed");
    if (a.kind === "hang") {
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    }
    if (a.kind === "stall") {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("tgi_queue_size 0\n"));
          signal.addEventListener("abort", () => controller.error(signal.reason), { once: true });
        },
      });
      return new Response(body, { status: 200 });
    }
    return new Response(a.body, { status: a.status, headers: a.age === undefined ? {} : { age: a.age } });
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const AGES = ["0", "5", "10", "10.5", "11", "60", "abc", "-3", "5, 5", "30, 30", "Infinity", "1e1", ""];
/** An `Age` over 10 s, or one that is not a single integer of seconds (RFC 9111 5.1): freshness unknown, stale. */
const servedStale = (age: string | undefined) => age !== undefined && (!/^\d+$/.test(age) || Number(age) > 10);

/** A `/load` body: a JSON object with a queue length of any JSON value, or something else entirely. */
const loadBody = fc.oneof(
  fc
    .record({
      queueLength: fc.oneof(
        fc.nat({ max: 100 }).map(String),
        fc.integer({ min: -100, max: -1 }).map(String),
        fc.constantFrom("1.5", "-0", "1e400", "-1e400", "1e308", '"3"', "null", "true", "[]", "{}"),
      ),
      running: fc.constantFrom("1", "-2", "1e400", '"x"'),
      tokenUsage: fc.constantFrom("0.25", "0", "1", "-1", "1.5", "62", "1e400", "null"),
    })
    .map((r) => `{"queueLength":${r.queueLength},"running":${r.running},"waiting":0,"tokenUsage":${r.tokenUsage}}`),
  fc.constantFrom("{}", "null", "[]", "3", '"3"', "true", "<html>upstream down</html>", "", '{"queueLength":'),
);

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

const answerArb = (body: fc.Arbitrary<string>): fc.Arbitrary<Answer> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        {
          kind: fc.constant("http" as const),
          status: fc.constantFrom(...OK_STATUSES),
          age: fc.constantFrom(...AGES),
          body,
        },
        { requiredKeys: ["kind", "status", "body"] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("http" as const),
        status: fc.constantFrom(...BAD_STATUSES),
        body,
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "network" as const }) },
    { weight: 1, arbitrary: fc.constantFrom({ kind: "hang" as const }, { kind: "stall" as const }) },
  );

const slow = (a: Answer) => a.kind === "hang" || a.kind === "stall";

/** What `probeReplica` must answer: a count, `undefined` (failed or unreadable) or `"timeout"`. */
function expectedProbe(
  kind: "spillway" | Kind,
  answer: Answer,
  page: Page | undefined,
  model: string | undefined,
): ProbeAnswer {
  if (slow(answer)) return "timeout";
  if (answer.kind !== "http" || answer.status < 200 || answer.status > 299) return undefined;
  if (kind === "spillway") {
    const json = parseJson(answer.body);
    if (!json.ok || typeof json.value !== "object" || json.value === null) return undefined;
    const q = (json.value as { queueLength?: unknown }).queueLength;
    // A /load answer that is not a count is unreadable: read as idle, it would take every request.
    return typeof q === "number" && isCount(q) ? q : undefined;
  }
  if (servedStale(answer.age) || page === undefined) return undefined;
  return expectedReading(page, model)?.queueLength;
}

describe("probeReplica (the router's probe)", () => {
  it("answers the model's count, undefined or timeout for any answer, never a count that is not one", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("spillway" as const, ...KINDS).chain(
          (kind): fc.Arbitrary<{ kind: "spillway" | Kind; answer: Answer; page: Page | undefined }> =>
            kind === "spillway"
              ? fc.record({ kind: fc.constant(kind), answer: answerArb(loadBody), page: fc.constant(undefined) })
              : mostlyReadable(kind).chain((page) =>
                  fc.record({
                    kind: fc.constant(kind),
                    answer: answerArb(fc.constant(render(page))),
                    page: fc.constant(page as Page | undefined),
                  }),
                ),
        ),
        modelArb,
        fc.option(fc.constantFrom("key", "k2"), { nil: undefined }),
        async ({ kind, answer, page }, model, upstreamApiKey) => {
          const calls: string[] = [];
          stubFetch(() => answer, calls);
          const deadline = slow(answer) ? SLOW_DEADLINE_MS : DEADLINE_MS;
          const got = await probeReplica(
            { url: "http://gpu.example/base", load: kind, model },
            deadline,
            upstreamApiKey ? { upstreamApiKey } : {},
            () => NOW,
          );
          const want = expectedProbe(kind, answer, page, model);
          const why = `${kind} ${JSON.stringify(answer)}: ${String(got)} != ${String(want)}`;
          if (typeof want === "number" && typeof got === "number") expect(close(got, want), why).toBe(true);
          else expect(got, why).toBe(want);
          if (typeof got === "number") expect(isCount(got), why).toBe(true);
          expect(calls).toEqual([kind === "spillway" ? "/base/load" : "/base/metrics"]);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED },
    );
  });
});

/** What `replicaLoad` must return. */
function expectedLoad(
  target: { url: string; load: "spillway" | Kind | "none"; model?: string },
  answers: Record<string, Answer>,
  pages: Record<string, Page | undefined>,
): Omit<ReplicaLoad, "error"> & { failed: boolean } {
  const base: Omit<ReplicaLoad, "error"> = {
    replica: target.url,
    ok: false,
    queueLength: null,
    running: null,
    waiting: null,
    tokenUsage: null,
    retractions: null,
    genThroughput: null,
  };
  const answered = (a: Answer | undefined) => a?.kind === "http" && a.status >= 200 && a.status <= 299;
  if (target.load === "none") return { ...base, failed: true };
  if (target.load !== "spillway") {
    const a = answers["/metrics"] as Answer;
    const page = pages["/metrics"];
    // As the router's probe: a page a cache served stale is no reading.
    const reading =
      answered(a) && !servedStale(a.kind === "http" ? a.age : undefined) && page
        ? expectedReading(page, target.model)
        : undefined;
    if (!reading) return { ...base, failed: true };
    return { ...base, ok: true, queueLength: reading.queueLength, tokenUsage: reading.tokenUsage, failed: false };
  }
  const load = answers["/load"] as Answer;
  const metrics = answers["/metrics"] as Answer;
  const json = answered(load) && load.kind === "http" ? parseJson(load.body) : { ok: false as const };
  const metricsPage =
    answered(metrics) && !servedStale(metrics.kind === "http" ? metrics.age : undefined)
      ? pages["/metrics"]
      : undefined;
  // A token usage outside 0..1 is unknown, as readMetrics reads it.
  const fraction = (v: unknown) => (typeof v === "number" && isFraction(v) ? v : null);
  // Counts as the router's probe reads them: not a count, no reading.
  const count = (v: unknown) => (typeof v === "number" && isCount(v) ? v : null);
  const fields = (json.ok && typeof json.value === "object" && json.value !== null ? json.value : {}) as Record<
    string,
    unknown
  >;
  const result = {
    ...base,
    ok: json.ok && metricsPage !== undefined,
    queueLength: json.ok ? count(fields.queueLength) : null,
    running: json.ok ? count(fields.running) : null,
    waiting: json.ok ? count(fields.waiting) : null,
    tokenUsage: json.ok ? fraction(fields.tokenUsage) : null,
    failed: !(json.ok && metricsPage !== undefined),
  };
  if (metricsPage) {
    result.retractions = expectedPromValue(metricsPage, "sglang:num_retracted_requests_total");
    result.genThroughput = expectedPromValue(metricsPage, "sglang:gen_throughput");
    result.tokenUsage ??= fraction(expectedPromValue(metricsPage, "sglang:token_usage"));
  }
  return result;
}

describe("replicaLoad (the dashboard's reading)", () => {
  it("never throws, and reads the model's figures from /load and /metrics; any failure is ok: false with an error", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(NOW);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("spillway" as const, "none" as const, ...KINDS).chain((kind) =>
          mostlyReadable(kind === "spillway" || kind === "none" ? "sglang" : kind).chain((page) =>
            fc.record({
              kind: fc.constant(kind),
              page: fc.constant(page),
              load: answerArb(loadBody),
              metrics: answerArb(fc.constant(render(page))),
            }),
          ),
        ),
        modelArb,
        async ({ kind, page, load, metrics }, model) => {
          const answers: Record<string, Answer> = { "/load": load, "/metrics": metrics };
          const calls: string[] = [];
          stubFetch((path) => answers[path] ?? { kind: "http", status: 404, body: "" }, calls);
          const target = { url: "http://gpu.example", load: kind, model };
          const timeout = slow(load) || slow(metrics) ? SLOW_DEADLINE_MS : DEADLINE_MS;
          const got = await replicaLoad(target, undefined, timeout);
          const { failed, ...want } = expectedLoad(target, answers, { "/metrics": page });
          const { error, ...figures } = got;
          const why = `${kind} /load ${JSON.stringify(load)} /metrics ${JSON.stringify(metrics).slice(0, 400)}`;
          const near = (a: number | null, b: number | null) => (a === null || b === null ? a === b : close(a, b));
          for (const key of Object.keys(want) as (keyof typeof want)[]) {
            const [a, b] = [figures[key], want[key]];
            if (typeof a === "number" || typeof b === "number")
              expect(near(a as number | null, b as number | null), `${key}: ${a} != ${b}; ${why}`).toBe(true);
            else expect(a, `${key}; ${why}`).toEqual(b);
          }
          expect(error !== undefined, `error ${error}; ${why}`).toBe(failed);
          if (kind === "none") expect(calls).toEqual([]);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED },
    );
  });
});

describe("promValue (the dashboard's single-sample reader)", () => {
  it("reads the first sample of a name with a finite value, in any layout; null when there is none", () => {
    fc.assert(
      fc.property(
        kindArb.chain((kind) => pageOf(kind)),
        fc.nat(),
        (page, pick) => {
          const text = render(page);
          const names = [...new Set([...seriesOf(page).map((s) => s.name), ...extraNames(page.kind)])];
          const name = names[pick % names.length] as string;
          const want = expectedPromValue(page, name);
          const why = `${name} in ${JSON.stringify(text)}`;
          expect(promValue(text, name), why).toBe(want);
          // A page without its final line feed (as a caller may pass a filtered page) reads the same.
          expect(promValue(text.replace(/\r?\n$/, ""), name), why).toBe(want);
        },
      ),
      { numRuns: RUNS * 4, seed: SEED },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// What the properties found, as examples (each failed before its fix).

describe("regressions", () => {
  it("readMetrics: a negative series does not cancel another's requests out, and an overflowing total is unknown", () => {
    // Was { queueLength: 0 }: the sum (1 + -1) was checked, not each sample.
    const cancelled =
      'sglang:num_queue_reqs{dp_rank="0"} 1\nsglang:num_queue_reqs{dp_rank="1"} -1\nsglang:num_running_reqs 0\n';
    expect(readMetrics("sglang", cancelled, { nowMs: NOW })).toBeUndefined();
    // Was { queueLength: Infinity }: each gauge was finite, running + waiting was not.
    expect(readMetrics("tgi", "tgi_queue_size 1e308\ntgi_batch_current_size 1e308\n", { nowMs: NOW })).toBeUndefined();
  });

  it("probeReplica: a /load queue length that is not a count is unknown, not a free replica", async () => {
    for (const body of ['{"queueLength":-1}', '{"queueLength":1e400}', "null"]) {
      stubFetch(() => ({ kind: "http", status: 200, body }));
      // Was -1 (the core counts it as 0: a free replica) and Infinity.
      expect(await probeReplica({ url: "http://gpu.example", load: "spillway" }, 1000, {}), body).toBeUndefined();
    }
    stubFetch(() => ({ kind: "http", status: 200, body: '{"queueLength":3}' }));
    expect(await probeReplica({ url: "http://gpu.example", load: "spillway" }, 1000, {})).toBe(3);
  });

  it("probeReplica and replicaLoad: a /metrics page whose Age is not one integer of seconds is no reading", async () => {
    const page = "tgi_queue_size 1\ntgi_batch_current_size 2\n";
    const target = { url: "http://gpu.example", load: "tgi" } as const;
    // Were 3 and ok: Number(age) is NaN or negative (or 0 for ""), and such an age read as fresh. A list is what
    // fetch makes of duplicate headers; the age of the page behind it is unknown.
    for (const age of ["5, 5", "30, 30", "abc", "Infinity", "-5", "1.5", ""]) {
      stubFetch(() => ({ kind: "http", status: 200, age, body: page }));
      expect(await probeReplica(target, 1000, {}), `age ${JSON.stringify(age)}`).toBeUndefined();
      expect(await replicaLoad(target, undefined, 1000), `age ${JSON.stringify(age)}`).toMatchObject({
        ok: false,
        queueLength: null,
      });
    }
    for (const age of [undefined, "0", "10"]) {
      stubFetch(() => ({ kind: "http", status: 200, age, body: page }));
      expect(await probeReplica(target, 1000, {}), `age ${age}`).toBe(3);
      expect(await replicaLoad(target, undefined, 1000), `age ${age}`).toMatchObject({ ok: true, queueLength: 3 });
    }
  });

  it("readMetrics and replicaLoad: a token usage outside 0..1 is unknown, not a negative or absurd percent", async () => {
    // Were -0.5, 1.5 and (mean of -0.5 and 1.5) 0.5: no range check, and two wrong values averaged into a right one.
    for (const usage of ["-0.5", "1.5"])
      expect(
        readMetrics("sglang", `sglang:num_running_reqs 1\nsglang:num_queue_reqs 0\nsglang:token_usage ${usage}\n`, {
          nowMs: NOW,
        }),
      ).toEqual({ queueLength: 1, tokenUsage: null });
    const mixed =
      'vllm:num_requests_running 1\nvllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc{engine="0"} -0.5\n';
    const pair = `${mixed}vllm:kv_cache_usage_perc{engine="1"} 1.5\nvllm:gpu_cache_usage_perc 0.25\n`;
    expect(readMetrics("vllm", pair, { nowMs: NOW })).toEqual({ queueLength: 1, tokenUsage: 0.25 });
    // The dashboard: /load's tokenUsage, then /metrics' sglang:token_usage, each unknown out of range.
    stubFetch((path) =>
      path === "/load"
        ? { kind: "http", status: 200, body: '{"queueLength":1,"tokenUsage":-1}' }
        : { kind: "http", status: 200, body: "sglang:token_usage 62\n" },
    );
    expect(await replicaLoad({ url: "http://gpu.example", load: "spillway" }, undefined, 1000)).toMatchObject({
      ok: true,
      tokenUsage: null,
    });
    const target = { url: "http://gpu.example", load: "sglang" } as const;
    stubFetch(() => ({
      kind: "http",
      status: 200,
      body: "sglang:num_running_reqs 1\nsglang:num_queue_reqs 0\nsglang:token_usage 1.5\n",
    }));
    expect(await replicaLoad(target, undefined, 1000)).toMatchObject({ ok: true, queueLength: 1, tokenUsage: null });
  });

  it("replicaLoad: a /load answering JSON null does not throw", async () => {
    stubFetch((path) => ({ kind: "http", status: 200, body: path === "/load" ? "null" : "sglang:gen_throughput 5\n" }));
    // Was a TypeError out of a function documented never to throw (and with it the whole fleet overview).
    const load = await replicaLoad({ url: "http://gpu.example", load: "spillway" }, undefined, 1000);
    expect(load).toMatchObject({ ok: true, queueLength: null, running: null, genThroughput: 5 });
  });

  it("promValue: reads the value, not the timestamp, trailing blanks or a tab; a sample without a value is none", () => {
    // Were 1750000000000, 0, null, null and 0.
    expect(promValue("sglang:gen_throughput 12 1750000000000\n", "sglang:gen_throughput")).toBe(12);
    expect(promValue("sglang:gen_throughput 12 \n", "sglang:gen_throughput")).toBe(12);
    expect(promValue("sglang:token_usage\t0.5\r\n", "sglang:token_usage")).toBe(0.5);
    expect(promValue(' sglang:token_usage{model_name="m"} 0.25\n', "sglang:token_usage")).toBe(0.25);
    expect(promValue('sglang:gen_throughput{a="b"}\nsglang:gen_throughput 7\n', "sglang:gen_throughput")).toBe(7);
  });
});
