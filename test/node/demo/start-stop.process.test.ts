import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { procStat } from "../../../src/bench/proc-stat";
import { freePort, waitForHttp } from "../../../src/bench/stack";

/**
 * How long the demo may take to answer /health: a bound on a hang, not a timing. wrangler dev's first build and
 * three engines on 2 cores shared with the rest of the suite (or an evaluation run) once took over a minute.
 */
const STARTUP_BOUND_MS = 180_000;

/** Processes whose command line mentions `needle` (ps, as an operator would check). */
function processesMentioning(needle: string): string[] {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(needle) && !line.includes("ps -eo"));
}

/** Starts `npm start`'s script (as its own process group) on free ports, through tsx; output is collected. */
async function startDemo() {
  const [worker, ...engines] = (await Promise.all([freePort(), freePort(), freePort(), freePort()])) as [
    number,
    ...number[],
  ];
  const persistTo = mkdtempSync(join(tmpdir(), "spillway-start-"));
  const flags = ["--port", String(worker), "--engine-ports", engines.join(","), "--persist-to", persistTo];
  const child = spawn("node_modules/.bin/tsx", ["scripts/start.ts", ...flags], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const out = { text: "" };
  child.stdout.on("data", (d: Buffer) => {
    out.text += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out.text += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const cleanUp = () => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // Already gone.
    }
    rmSync(persistTo, { recursive: true, force: true });
  };
  return { worker, engines, child, out, exited, cleanUp };
}

/** The npm running the process whose command line mentions `needle`: the parent of npm's `sh -c` (from /proc). */
function npmAbove(needle: string): number {
  const sh = processesMentioning(needle).find((line) => /^\s*\d+ (\/bin\/)?sh -c /.test(line));
  if (sh === undefined) throw new Error(`no sh -c running ${needle}`);
  const npm = procStat(Number.parseInt(sh, 10))?.ppid ?? Number.NaN;
  // npm's process title; anything else is not ours to kill.
  expect(readFileSync(`/proc/${npm}/cmdline`, "utf8")).toMatch(/^npm /);
  return npm;
}

/** No process mentions any of the ports (engines and wrangler: `--port P`; workerd: `127.0.0.1:P`). */
function leftBehind(ports: number[]): string[] {
  return ports.flatMap((port) => [
    ...processesMentioning(`--port ${port}`),
    ...processesMentioning(`127.0.0.1:${port}`),
  ]);
}

describe("npm start", () => {
  it(
    "brings up three engines and the Worker, goes on without an engine that dies, and Ctrl-C leaves no process behind",
    async () => {
      const [worker, ...engines] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      const persistTo = mkdtempSync(join(tmpdir(), "spillway-start-"));
      const child = spawn(
        "node_modules/.bin/tsx",
        ["scripts/start.ts", "--port", String(worker), "--engine-ports", engines.join(","), "--persist-to", persistTo],
        { stdio: ["ignore", "pipe", "pipe"], detached: true },
      );
      let output = "";
      child.stdout.on("data", (d: Buffer) => {
        output += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        output += d.toString();
      });
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      try {
        await waitForHttp(`http://127.0.0.1:${worker}/health`, STARTUP_BOUND_MS);
        // The Worker routes to the demo's engines (configured on the moved ports): the answer names the engine that
        // served it (`engine-<port>-x<speed>`), so engines on the sample's ports 8001-8003 (a demo already running)
        // cannot pass for them.
        const ownEngine = new RegExp(`^engine-(${engines.join("|")})-x`);
        const res = await fetch(`http://127.0.0.1:${worker}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }),
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { served_by: string }).served_by).toMatch(ownEngine);
        for (const port of engines) expect(processesMentioning(`--port ${port}`).length).toBeGreaterThan(0);
        expect(processesMentioning(`--port ${worker}`).length).toBeGreaterThan(0);

        // One engine killed outright (a crashed GPU server): the demo goes on and the Worker routes around it.
        // Before, any child's exit stopped the whole demo, so the failure spillway handles could not be watched.
        const lost = engines[0] as number;
        for (const line of processesMentioning(`--port ${lost}`)) {
          try {
            process.kill(Number.parseInt(line, 10), "SIGKILL");
          } catch {
            // Gone with its parent.
          }
        }
        for (let i = 0; i < 150 && !output.includes(`engine:${lost} exited`); i++)
          await new Promise((r) => setTimeout(r, 200));
        // Its launcher (tsx) is killed too: with no exit code the signal is named ("code null" before), and were the
        // launcher to see its engine's death first, it would exit with 137.
        expect(output).toMatch(
          new RegExp(`engine:${lost} exited \\((signal SIGKILL|code 137)\\); the demo goes on with 2 engine\\(s\\)`),
        );
        expect(output).toContain(`To bring it back: npm run engine -- --port ${lost} --speed 1 --deployment `);
        for (let i = 0; i < 4; i++) {
          const after = await fetch(`http://127.0.0.1:${worker}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: "demo-model",
              messages: [{ role: "user", content: `hi ${i}` }],
              max_tokens: 4,
            }),
          });
          // connectAttempts (2): an attempt that meets the dead engine marks it down and goes on to another.
          expect(after.status).toBe(200);
          const servedBy = ((await after.json()) as { served_by: string }).served_by;
          expect(servedBy).toMatch(ownEngine);
          expect(servedBy).not.toMatch(new RegExp(`^engine-${lost}-x`));
        }
        expect(child.exitCode).toBeNull();

        process.kill(child.pid as number, "SIGINT");
        expect(await exited).toBe(0);
        expect(output).toContain("spillway demo is up");
        // workerd is started with --socket-addr=entry=127.0.0.1:<port>, wrangler and engines with --port <port>.
        for (const port of [worker, ...engines]) {
          expect(processesMentioning(`--port ${port}`), `port ${port}`).toEqual([]);
          expect(processesMentioning(`127.0.0.1:${port}`), `port ${port}`).toEqual([]);
        }
      } finally {
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {
          // Already gone.
        }
        rmSync(persistTo, { recursive: true, force: true });
      }
    },
    STARTUP_BOUND_MS + 60_000,
  );

  it(
    "killed with SIGKILL (no chance to clean up), it leaves no engine or workerd behind: the children watch it",
    async () => {
      const demo = await startDemo();
      try {
        await waitForHttp(`http://127.0.0.1:${demo.worker}/health`, STARTUP_BOUND_MS);
        const ports = [demo.worker, ...demo.engines];
        expect(leftBehind(ports).length).toBeGreaterThan(0);
        process.kill(-(demo.child.pid as number), "SIGKILL"); // tsx and the supervisor, at once
        await demo.exited;
        for (let i = 0; i < 100 && leftBehind(ports).length > 0; i++) await new Promise((r) => setTimeout(r, 200));
        expect(leftBehind(ports)).toEqual([]);
      } finally {
        demo.cleanUp();
      }
    },
    STARTUP_BOUND_MS + 60_000,
  );

  it(
    "started by a script that exits once it is up (nohup npm start &), it runs on; with npm itself then killed, it stops itself",
    async () => {
      const [worker, ...engines] = (await Promise.all([freePort(), freePort(), freePort(), freePort()])) as [
        number,
        ...number[],
      ];
      const persistTo = mkdtempSync(join(tmpdir(), "spillway-start-"));
      const done = join(persistTo, "launcher-may-exit");
      const flags = `--port ${worker} --engine-ports ${engines.join(",")} --persist-to ${persistTo}/state`;
      // A non-interactive bash has no job control: npm joins the script's process group, and is reparented when
      // the script exits - here once the demo is up, as a script that waits for its health check would.
      const launcher = spawn(
        "bash",
        ["-c", `nohup npm start -- ${flags} > /dev/null 2>&1 & while [ ! -e ${done} ]; do sleep 0.2; done`],
        { stdio: "ignore", detached: true, env: { ...process.env, npm_config_update_notifier: "false" } },
      );
      const launcherExited = new Promise<number | null>((resolve) => launcher.once("exit", (code) => resolve(code)));
      const supervisor = `scripts/start.ts --port ${worker}`;
      try {
        await waitForHttp(`http://127.0.0.1:${worker}/health`, STARTUP_BOUND_MS);
        writeFileSync(done, "");
        expect(await launcherExited).toBe(0);
        // Several of the watcher's rounds (500 ms each): a demo that took npm's new parent for a killed one has
        // stopped by then. (A slower machine only makes this check weaker, never wrong.)
        await new Promise((r) => setTimeout(r, 3_000));
        expect(processesMentioning(supervisor).length).toBeGreaterThan(0);
        expect((await fetch(`http://127.0.0.1:${worker}/health`)).ok).toBe(true);

        // npm itself killed with SIGKILL: its sh is reparented, nobody holds the job, and the demo stops itself.
        const npm = npmAbove(supervisor);
        process.kill(npm, "SIGKILL"); // npm alone; its sh, tsx and the script run on
        const ports = [worker, ...engines];
        const stillThere = () => [...leftBehind(ports), ...processesMentioning(supervisor)];
        for (let i = 0; i < 150 && stillThere().length > 0; i++) await new Promise((r) => setTimeout(r, 200));
        expect(stillThere()).toEqual([]);
      } finally {
        try {
          process.kill(-(launcher.pid as number), "SIGKILL"); // npm, its sh, tsx and the script; guards do the rest
        } catch {
          // Already gone.
        }
        const ports = [worker, ...engines];
        for (let i = 0; i < 150 && leftBehind(ports).length > 0; i++) await new Promise((r) => setTimeout(r, 200));
        rmSync(persistTo, { recursive: true, force: true });
        expect(leftBehind(ports)).toEqual([]);
      }
    },
    STARTUP_BOUND_MS + 60_000,
  );

  it("a second npm start while the ports are taken says so in one line and starts nothing", async () => {
    const occupied = createServer();
    const port = await freePort();
    await new Promise<void>((done) => occupied.listen(port, "127.0.0.1", done));
    const [engineA, engineB, worker] = [await freePort(), await freePort(), await freePort()];
    try {
      const child = spawn(
        "node_modules/.bin/tsx",
        ["scripts/start.ts", "--port", String(worker), "--engine-ports", [port, engineA, engineB].join(",")],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let output = "";
      child.stdout.on("data", (d: Buffer) => {
        output += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        output += d.toString();
      });
      const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));
      expect(code).toBe(1);
      const lines = output.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toHaveLength(1);
      // The taken port is named; another of the free ports picked above may have been taken meanwhile by some
      // process's outgoing connection (they are ephemeral ports), and is then named beside it.
      expect(lines[0]).toMatch(new RegExp(`ports? (\\d+, )*${port}(, \\d+)* already in use`));
      expect(leftBehind([engineA, engineB, worker])).toEqual([]);
    } finally {
      await new Promise((done) => occupied.close(done));
    }
  }, 60_000);
});
