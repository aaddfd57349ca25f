/** One sample of a Prometheus text exposition: `name{labels} value [timestamp]`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The optional sample timestamp (ms since the epoch), when the exporter wrote one. */
  timestampMs?: number;
}

/** A page that is not valid Prometheus text (or was cut off): the reader must treat it as unknown. */
export class PrometheusTextError extends Error {
  override name = "PrometheusTextError";
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^-?\d+$/;

function parseValue(text: string, line: number): number {
  if (text === "NaN") return Number.NaN;
  if (text === "+Inf" || text === "Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (!FLOAT.test(text)) throw new PrometheusTextError(`line ${line}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` from the start of `rest`; returns the labels and what follows the closing brace. */
function parseLabels(rest: string, line: number): { labels: Record<string, string>; after: string } {
  // A Map, not an object: a label named `__proto__` must be kept (and a repeated one refused).
  const labels = new Map<string, string>();
  let i = 1; // past "{"
  const fail = (why: string): never => {
    throw new PrometheusTextError(`line ${line}: ${why}`);
  };
  for (;;) {
    while (rest[i] === " " || rest[i] === "\t") i++;
    if (rest[i] === "}") return { labels: Object.fromEntries(labels), after: rest.slice(i + 1) };
    const name = LABEL_NAME.exec(rest.slice(i))?.[0] ?? fail("bad label name");
    i += name.length;
    while (rest[i] === " " || rest[i] === "\t") i++;
    if (rest[i] !== "=") fail(`expected = after label ${name}`);
    i++;
    while (rest[i] === " " || rest[i] === "\t") i++;
    if (rest[i] !== '"') fail(`expected " to open label ${name}`);
    i++;
    let value = "";
    for (;;) {
      const c = rest[i];
      if (c === undefined) fail(`unterminated label ${name}`);
      if (c === '"') break;
      if (c === "\\") {
        const next = rest[i + 1];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else fail(`bad escape in label ${name}`);
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    i++; // past the closing quote
    if (labels.has(name)) fail(`label ${name} repeated`);
    labels.set(name, value);
    while (rest[i] === " " || rest[i] === "\t") i++;
    if (rest[i] === ",") i++;
    else if (rest[i] !== "}") fail("expected , or } after a label");
  }
}

/**
 * Parses Prometheus text exposition (format 0.0.4, what vLLM, SGLang, TGI and prom-client serve) into samples.
 * Strict on purpose: a page that is cut off (the format ends every line, the last one included, with `\n`), or
 * that has any line that is not a comment, blank or a well-formed sample, throws `PrometheusTextError`. A load
 * probe reads a throw as "unknown": half a page must never read as an idle replica.
 *
 * @example
 * ```ts
 * parsePrometheusText('# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3.0\n');
 * // [{ name: "vllm:num_requests_running", labels: { model_name: "m" }, value: 3 }]
 * parsePrometheusText("vllm:num_requests_running{model_"); // throws PrometheusTextError
 * ```
 */
export function parsePrometheusText(text: string): PromSample[] {
  if (text.length > 0 && !text.endsWith("\n")) throw new PrometheusTextError("page cut off (no final newline)");
  const samples: PromSample[] = [];
  const lines = text.split("\n");
  lines.pop(); // what follows the final newline
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.replace(/\r$/, "").trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const name = METRIC_NAME.exec(trimmed)?.[0];
    if (!name) throw new PrometheusTextError(`line ${line}: bad metric name`);
    let rest = trimmed.slice(name.length);
    let labels: Record<string, string> = {};
    // Blanks may separate the name from its labels (as Prometheus's own parser allows); the value needs one only
    // where it would run into the name.
    const afterName = rest.replace(/^[ \t]+/, "");
    if (afterName.startsWith("{")) ({ labels, after: rest } = parseLabels(afterName, line));
    else if (rest.length > 0 && rest[0] !== " " && rest[0] !== "\t") {
      throw new PrometheusTextError(`line ${line}: expected a space before the value`);
    }
    const fields = rest.trim().split(/[ \t]+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === "") {
      throw new PrometheusTextError(`line ${line}: expected a value and an optional timestamp`);
    }
    const sample: PromSample = { name, labels, value: parseValue(fields[0] as string, line) };
    if (fields[1] !== undefined) {
      if (!INTEGER.test(fields[1])) throw new PrometheusTextError(`line ${line}: bad timestamp`);
      sample.timestampMs = Number(fields[1]);
    }
    samples.push(sample);
  });
  return samples;
}

/**
 * The sum of every sample of `name` whose labels match `where` (each given label equal), or `undefined`
 * when no sample matched (a metric that is absent is unknown, not zero).
 *
 * @example
 * ```ts
 * const samples = parsePrometheusText('q{engine="0"} 2\nq{engine="1"} 3\n');
 * sumSamples(samples, "q"); // 5
 * sumSamples(samples, "q", { engine: "1" }); // 3
 * sumSamples(samples, "missing"); // undefined
 * ```
 */
export function sumSamples(
  samples: PromSample[],
  name: string,
  where: Record<string, string> = {},
): number | undefined {
  let sum: number | undefined;
  for (const sample of matching(samples, name, where)) sum = (sum ?? 0) + sample.value;
  return sum;
}

/**
 * Every sample of `name` whose labels match `where`.
 *
 * @example
 * ```ts
 * matching(parsePrometheusText('u{engine="0"} 0.5\n'), "u").map((s) => s.value); // [0.5]
 * ```
 */
export function matching(samples: PromSample[], name: string, where: Record<string, string> = {}): PromSample[] {
  const wanted = Object.entries(where);
  return samples.filter((s) => s.name === name && wanted.every(([label, value]) => s.labels[label] === value));
}
