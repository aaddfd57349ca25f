import { describe, expect, it } from "vitest";
import { PrometheusTextError, parsePrometheusText, sumSamples } from "../../../src/edge/prometheus-text";

describe("parsePrometheusText", () => {
  it("reads names, labels, values and timestamps, skipping HELP/TYPE and blank lines", () => {
    const page = [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0',
      "",
      "tgi_queue_size 7 1700000000000",
      'odd{a="x, y}",b = "q\\"uote\\\\ and \\n",} -1.5e2',
      "special_values_total NaN",
      "up +Inf",
      "",
    ].join("\n");
    const samples = parsePrometheusText(page);
    expect(samples).toEqual([
      {
        name: "vllm:num_requests_running",
        labels: { engine: "0", model_name: "meta-llama/Llama-3.1-8B-Instruct" },
        value: 3,
      },
      { name: "tgi_queue_size", labels: {}, value: 7, timestampMs: 1_700_000_000_000 },
      { name: "odd", labels: { a: "x, y}", b: 'q"uote\\ and \n' }, value: -150 },
      { name: "special_values_total", labels: {}, value: Number.NaN },
      { name: "up", labels: {}, value: Number.POSITIVE_INFINITY },
    ]);
  });

  it("accepts an empty page and CRLF line ends", () => {
    expect(parsePrometheusText("")).toEqual([]);
    expect(parsePrometheusText("a 1\r\nb 2\r\n").map((s) => s.value)).toEqual([1, 2]);
  });

  it.each([
    ["a page cut off mid-line", 'vllm:num_requests_running{engine="0"} 3'],
    ["a page cut off inside labels", 'vllm:num_requests_running{engine="0\n'],
    ["a value that is not a number", "a one\n"],
    ["a missing value", 'a{b="c"}\n'],
    ["a bad label escape", 'a{b="\\x"} 1\n'],
    ["a repeated label", 'a{b="1",b="2"} 1\n'],
    ["an unquoted label value", "a{b=1} 1\n"],
    ["junk after the timestamp", "a 1 2 3\n"],
    ["a non-integer timestamp", "a 1 2.5\n"],
    ["a bad metric name", "1abc 1\n"],
    ["HTML instead of metrics", "<html><body>502 Bad Gateway</body></html>\n"],
  ])("rejects %s", (_, page) => {
    expect(() => parsePrometheusText(page)).toThrow(PrometheusTextError);
  });
});

describe("sumSamples", () => {
  const samples = parsePrometheusText(
    ['q{engine="0",model_name="a"} 2', 'q{engine="1",model_name="a"} 3', 'q{engine="0",model_name="b"} 10', ""].join(
      "\n",
    ),
  );

  it("sums every label set, or only those matching", () => {
    expect(sumSamples(samples, "q")).toBe(15);
    expect(sumSamples(samples, "q", { model_name: "a" })).toBe(5);
  });

  it("is undefined, not zero, when nothing matches", () => {
    expect(sumSamples(samples, "q", { model_name: "c" })).toBeUndefined();
    expect(sumSamples(samples, "absent")).toBeUndefined();
  });
});
