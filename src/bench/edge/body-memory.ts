/**
 * `npm run bench:body-memory`: what a 16 MiB request body (the edge's default `maxBodyBytes`: a chat request with
 * a base64 image) costs the edge's memory, step by step: `readRequestBody` (inside its `JSON.parse`, where the
 * bytes, the text and the parsed JSON are all alive), the request fingerprint (inside its digest), the signature
 * of the forwarded request (inside its body digest), and what is kept after them for as long as the request lasts.
 * Each figure is `process.memoryUsage()`'s `heapUsed` + `arrayBuffers` after forced GCs, less the same before the
 * body was read, so it counts only what is alive at that point. Two bodies: ASCII only, and one with a few
 * non-ASCII characters (V8 then stores the text at two bytes a character). Each runs in a fresh Node process
 * (`--expose-gc`); Node's V8 stands in for workerd's.
 *
 * `--before DIR` runs the same against another checkout's `src/` (its `readRequestBody` may return the text, as it
 * did before the edge kept bytes).
 *
 * @example
 * ```sh
 * npm run bench:body-memory -- --before /path/to/main
 * ```
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandFlags } from "../command-line";

const MAX_BYTES = 16 * 1024 * 1024;
const MiB = 1024 * 1024;
const CHILD = "SPILLWAY_BODY_MEMORY_CHILD";
const STEPS = ["checked", "fingerprint", "signature", "kept"] as const;
type Step = (typeof STEPS)[number];
const KINDS = { ascii: "What is in this picture?", "non-ASCII": "Qu'est-ce que c'est ? 😀" } as const;
type Kind = keyof typeof KINDS;

/** A chat request of exactly `MAX_BYTES` (UTF-8) whose image is base64 noise. */
function chatBody(question: string): Uint8Array {
  const encoder = new TextEncoder();
  const head = encoder.encode(
    `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"${question}"},` +
      `{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,`,
  );
  const tail = encoder.encode(`"}}]}],"max_tokens":300}`);
  const out = new Uint8Array(MAX_BYTES);
  out.set(head, 0);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let seed = 1;
  for (let i = head.byteLength; i < MAX_BYTES - tail.byteLength; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = alphabet.charCodeAt(seed % 64);
  }
  out.set(tail, MAX_BYTES - tail.byteLength);
  return out;
}

/** One checkout and body, in this (child) process: MiB alive at each step. */
async function measure(root: string, kind: Kind): Promise<Record<Step, number>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc");
  const { readRequestBody } = await import(resolve(root, "src/edge/request-body.ts"));
  const { requestFingerprint } = await import(resolve(root, "src/core/request-fingerprint.ts"));
  const { signRequest } = await import(resolve(root, "src/core/request-signature.ts"));
  // The runtime's network buffers are not the isolate's: the body's first copy is the one arrayBuffer() makes.
  const source = chatBody(KINDS[kind]);
  const request = {
    headers: new Headers({ "content-type": "application/json", "content-length": String(MAX_BYTES) }),
    arrayBuffer: async () => source.slice().buffer,
    body: null,
  } as unknown as Request;
  const alive = () => {
    // Twice: array buffers a GC found dead are freed by a sweeper that the next GC waits for.
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const seen: Partial<Record<Step, number>> = {};
  let step: Step | undefined;
  const note = () => {
    if (step) seen[step] = Math.max(seen[step] ?? 0, alive() - base);
  };
  const parse = JSON.parse;
  JSON.parse = ((text: string, reviver?: never) => {
    const value = parse(text, reviver);
    note();
    return value;
  }) as typeof JSON.parse;
  const subtle = crypto.subtle;
  const digest = subtle.digest.bind(subtle);
  subtle.digest = ((...args: Parameters<typeof subtle.digest>) => {
    note();
    return digest(...args);
  }) as typeof subtle.digest;
  alive();
  const base = alive();
  step = "checked";
  const body = await readRequestBody(request, "/v1/chat/completions", MAX_BYTES);
  if ("status" in body) throw new Error(body.message);
  // The body as the edge forwards it: its bytes, or (before) its text.
  const forwarded: Uint8Array | string = "bytes" in body ? body.bytes : body.text;
  step = "fingerprint";
  await requestFingerprint({
    authorization: "Bearer sk",
    method: "POST",
    path: "/v1/chat/completions",
    body: forwarded,
  });
  step = "signature";
  await signRequest("secret", {
    method: "POST",
    path: "/v1/chat/completions",
    body: forwarded,
    deployment: "m",
    timestampMs: Date.now(),
    nonce: "n",
  });
  step = "kept";
  note();
  JSON.parse = parse;
  subtle.digest = digest;
  // Alive to the end: the request keeps its body (and the runtime its buffer) until it is answered.
  if (body === undefined || source.byteLength !== MAX_BYTES) throw new Error("unreachable");
  return Object.fromEntries(STEPS.map((s) => [s, (seen[s] ?? Number.NaN) / MiB])) as Record<Step, number>;
}

const child = process.env[CHILD];
if (child) {
  const { root, kind } = JSON.parse(child) as { root: string; kind: Kind };
  console.log(JSON.stringify(await measure(root, kind)));
} else {
  const { before } = commandFlags(
    "npm run bench:body-memory -- [--before OTHER-CHECKOUT]",
    { options: { before: { type: "string" } } },
    ({ values }) => ({ before: values.before }),
  );
  const roots: [string, string][] = [["this checkout", resolve(".")]];
  if (before) roots.unshift([`before (${before})`, resolve(before)]);
  const entry = fileURLToPath(import.meta.url);
  console.log(`MiB alive (heapUsed + arrayBuffers, after forced GCs) for a ${MAX_BYTES}-byte chat body`);
  console.log(`| code | body | ${STEPS.join(" | ")} |`);
  console.log(`| --- | --- | ${STEPS.map(() => "---:").join(" | ")} |`);
  for (const [name, root] of roots) {
    for (const kind of Object.keys(KINDS) as Kind[]) {
      const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", entry], {
        env: { ...process.env, [CHILD]: JSON.stringify({ root, kind }) },
        encoding: "utf8",
      });
      if (run.status !== 0) throw new Error(`${name} ${kind}: ${run.stderr}`);
      const figures = JSON.parse(run.stdout.trim().split("\n").at(-1) as string) as Record<Step, number>;
      console.log(`| ${name} | ${kind} | ${STEPS.map((s) => figures[s].toFixed(1)).join(" | ")} |`);
    }
  }
}
