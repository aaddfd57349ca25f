/** A colour per series, readable on white and distinct in grey scale order. */
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f", "#bab0ac"];

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (n: number) => (Math.round(n * 100) / 100).toString();

function legend(names: readonly string[], x: number, y: number): string {
  return names
    .map(
      (name, i) =>
        `<rect x="${x}" y="${y + i * 16}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/>` +
        `<text x="${x + 14}" y="${y + i * 16 + 9}" font-size="11">${esc(name)}</text>`,
    )
    .join("");
}

/**
 * A grouped bar chart as a standalone SVG string: one group per category, one bar per series; `null` values
 * are drawn as a small "n/a" mark. Values are in [0, yMax].
 *
 * @example
 * ```ts
 * groupedBarChart({ title: "X", categories: ["a", "b"], series: [{ name: "p", values: [0.5, 1] }], yMax: 1 });
 * ```
 */
export function groupedBarChart(input: {
  title: string;
  categories: readonly string[];
  series: readonly { name: string; values: readonly (number | null)[] }[];
  yMax: number;
  yLabel: string;
}): string {
  const left = 50;
  const top = 30;
  const plotH = 260;
  const group = Math.max(60, input.series.length * 12 + 20);
  const plotW = input.categories.length * group;
  const legendW = 330;
  const width = left + plotW + 20 + legendW;
  const height = top + plotH + 60;
  const y = (v: number) => top + plotH - (Math.min(v, input.yMax) / input.yMax) * plotH;
  const parts: string[] = [];
  parts.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">${esc(input.title)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (input.yMax * i) / 5;
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${fmt(v)}</text>`);
  }
  parts.push(
    `<text x="12" y="${top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${top + plotH / 2})" text-anchor="middle">${esc(input.yLabel)}</text>`,
  );
  input.categories.forEach((category, c) => {
    const x0 = left + c * group + 10;
    input.series.forEach((s, i) => {
      const v = s.values[c];
      const x = x0 + i * 12;
      if (v === null || v === undefined) {
        parts.push(`<text x="${x + 5}" y="${y(0) - 3}" font-size="7" text-anchor="middle">n/a</text>`);
      } else {
        parts.push(
          `<rect x="${x}" y="${y(v)}" width="10" height="${y(0) - y(v)}" fill="${PALETTE[i % PALETTE.length]}"><title>${esc(s.name)}: ${fmt(v)}</title></rect>`,
        );
      }
    });
    parts.push(
      `<text x="${x0 + (input.series.length * 12) / 2}" y="${top + plotH + 14}" font-size="10" text-anchor="middle">${esc(category)}</text>`,
    );
  });
  parts.push(
    legend(
      input.series.map((s) => s.name),
      left + plotW + 20,
      top,
    ),
  );
  return svgDocument(width, height, parts);
}

/**
 * A line chart of series over a shared x axis (seconds), with optional shaded x ranges (e.g. a burst).
 *
 * @example
 * ```ts
 * lineChart({ title: "retries", xStep: 2, series: [{ name: "p", values: [0, 3, 1] }], yLabel: "per 2 s", shade: [[60, 80]] });
 * ```
 */
export function lineChart(input: {
  title: string;
  xStep: number;
  series: readonly { name: string; values: readonly number[] }[];
  yLabel: string;
  shade?: readonly (readonly [number, number])[];
}): string {
  const left = 50;
  const top = 30;
  const plotW = 620;
  const plotH = 240;
  const width = left + plotW + 20 + 330;
  const height = top + plotH + 50;
  const n = Math.max(...input.series.map((s) => s.values.length), 1);
  const xMax = n * input.xStep;
  const rawMax = Math.max(1, ...input.series.flatMap((s) => s.values));
  const yMax = Math.ceil(rawMax / 5) * 5;
  const x = (t: number) => left + (t / xMax) * plotW;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [];
  parts.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">${esc(input.title)}</text>`);
  for (const [a, b] of input.shade ?? []) {
    parts.push(`<rect x="${x(a)}" y="${top}" width="${x(b) - x(a)}" height="${plotH}" fill="#f4e4e4"/>`);
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5;
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${fmt(v)}</text>`);
  }
  const xTick = xMax > 400 ? 60 : 30;
  for (let t = 0; t <= xMax; t += xTick) {
    parts.push(`<text x="${x(t)}" y="${top + plotH + 14}" font-size="10" text-anchor="middle">${t}</text>`);
  }
  parts.push(
    `<text x="${left + plotW / 2}" y="${top + plotH + 32}" font-size="11" text-anchor="middle">time (s)</text>`,
  );
  parts.push(
    `<text x="12" y="${top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${top + plotH / 2})" text-anchor="middle">${esc(input.yLabel)}</text>`,
  );
  input.series.forEach((s, i) => {
    const points = s.values.map((v, k) => `${fmt(x((k + 0.5) * input.xStep))},${fmt(y(v))}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="1.5"/>`);
  });
  parts.push(
    legend(
      input.series.map((s) => s.name),
      left + plotW + 20,
      top,
    ),
  );
  return svgDocument(width, height, parts);
}

/** The SVG document around a chart's parts, on a white background. */
function svgDocument(width: number, height: number, parts: readonly string[]): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
${parts.join("\n")}
</svg>
`;
}
