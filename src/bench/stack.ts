import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { groupPids } from "./proc-stat";

/** Environment that keeps wrangler and miniflare offline and quiet (see README, "Development"). */
export function offlineWranglerEnv(root = process.cwd()): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_SEND_ERROR_REPORTS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_HIDE_BANNER: "true",
    XDG_CONFIG_HOME: resolve(root, ".xdg"),
    WRANGLER_LOG_PATH: resolve(root, ".wrangler/logs"),
  };
}

/** A child process started in its own process group, so stopping it stops its children (workerd). */
export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** Signals the whole group and resolves once the leader has exited (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The guard's program (plain JavaScript for `node -e`, so it starts in milliseconds): every 300 ms it checks that
 * the supervisor is alive; once it is gone (SIGKILL, a closed terminal), the guarded group gets SIGTERM, then
 * SIGKILL 3 s later. A zombie supervisor (dead, but not yet reaped by a parent that may never wait for it) is gone:
 * signal 0 still reaches it, so its state is read from `/proc/<pid>/stat` (see `proc-stat.ts`; off Linux, signal 0
 * alone decides). It exits by itself when the guarded group is gone.
 */
const GUARD_PROGRAM = `
const [parent, group] = process.argv.slice(-2).map(Number);
const exists = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
const dead = (pid) => {
  try {
    const stat = require("node:fs").readFileSync("/proc/" + pid + "/stat", "utf8");
    const state = stat.charAt(stat.lastIndexOf(")") + 2);
    return state === "Z" || state === "X";
  } catch { return false; }
};
const signal = (s) => { try { process.kill(-group, s); } catch {} };
const timer = setInterval(() => {
  if (!exists(-group)) process.exit(0);
  if (exists(parent) && !dead(parent)) return;
  clearInterval(timer);
  signal("SIGTERM");
  setTimeout(() => { signal("SIGKILL"); process.exit(0); }, 3000);
}, 300);
`;

/**
 * Makes the process group `group` watch `supervisor`: a tiny guard process kills the group when the supervisor
 * dies without stopping it (a SIGKILL gives it no chance to). Detached, so nothing waits for it.
 */
function guardGroup(group: number, supervisor: number): void {
  const guard = spawn(process.execPath, ["-e", GUARD_PROGRAM, String(supervisor), String(group)], {
    detached: true,
    stdio: "ignore",
  });
  guard.unref();
}

/**
 * Starts a command in its own process group with output prefixed by its name. The group also watches this process
 * (unless `watchParent` is false): if it dies without stopping its children (SIGKILL, a closed terminal), the group
 * is killed too, so no engine or workerd outlives the supervisor. On by default: the child's own process group puts
 * it out of reach of a Ctrl-C or a group kill aimed at the supervisor, so without its guard it runs on, and an
 * opt-in is easy to forget.
 *
 * @example
 * ```ts
 * const engine = startManaged("engine", "node_modules/.bin/tsx", ["src/engine/main.ts", "--port", "8001"]);
 * await engine.stop();
 * ```
 */
export function startManaged(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; quiet?: boolean; watchParent?: boolean; cwd?: string } = {},
): ManagedProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    detached: true,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (options.watchParent !== false && child.pid !== undefined) guardGroup(child.pid, process.pid);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  if (!options.quiet) {
    const prefix = (chunk: Buffer) =>
      chunk
        .toString()
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => `[${name}] ${line}\n`)
        .join("");
    child.stdout?.on("data", (chunk: Buffer) => process.stdout.write(prefix(chunk)));
    child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(prefix(chunk)));
  } else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  return {
    name,
    child,
    async stop(graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null) signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      // workerd may outlive wrangler by a moment; make sure nothing of the group is left.
      signalGroup("SIGKILL");
    },
  };
}

/**
 * Polls `url` until it answers (any HTTP status) or `timeoutMs` passes.
 *
 * @example
 * ```ts
 * await waitForHttp("http://127.0.0.1:8787/health");
 * ```
 */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** How to start `wrangler dev`. */
export interface WranglerDevOptions {
  port: number;
  /** `--var NAME:VALUE` bindings (the configuration, tokens for tests). */
  vars?: Record<string, string>;
  /** `--persist-to`: a folder of its own, so two instances never share state. */
  persistTo?: string;
  quiet?: boolean;
  /**
   * wrangler's `--log-level`: `warn` (the default) keeps the console readable under load; `log` also prints what
   * the Worker and its Durable Objects `console.log` (the routers' `spillway.rejection` records) and a line per
   * request. wrangler 4 applies the level to the Worker's own output, so at `warn` those records never appear.
   */
  logLevel?: "warn" | "log";
  /** The Worker project to run (its wrangler.toml, its node_modules/.bin/wrangler); default the working directory. */
  root?: string;
  /**
   * Kill wrangler and its workerd processes if this process dies without stopping them (see `startManaged`);
   * default true.
   */
  watchParent?: boolean;
}

/**
 * Starts `wrangler dev` on 127.0.0.1 with the offline environment.
 *
 * @example
 * ```ts
 * const worker = startWranglerDev({ port: 8787 });
 * await waitForHttp("http://127.0.0.1:8787/health");
 * ```
 */
export function startWranglerDev(options: WranglerDevOptions): ManagedProcess {
  const root = options.root ?? process.cwd();
  mkdirSync(resolve(root, ".wrangler/logs"), { recursive: true });
  const logLevel = options.logLevel ?? "warn";
  const args = ["dev", "--local", "--ip", "127.0.0.1", "--port", String(options.port), "--log-level", logLevel];
  args.push("--inspector-port", "0", "--show-interactive-dev-session=false");
  if (options.persistTo) args.push("--persist-to", options.persistTo);
  for (const [key, value] of Object.entries(options.vars ?? {})) args.push("--var", `${key}:${value}`);
  return startManaged("wrangler", resolve(root, "node_modules/.bin/wrangler"), args, {
    // wrangler reads wrangler.toml (and `main`) from its working directory: without it, another project's `root`
    // would run this repository's Worker.
    cwd: root,
    env: offlineWranglerEnv(root),
    quiet: options.quiet ?? false,
    watchParent: options.watchParent ?? true,
  });
}

/**
 * The ports among `ports` that something already listens on at 127.0.0.1.
 *
 * @example
 * ```ts
 * const taken = await takenPorts([8001, 8787]); // e.g. [8787] while another demo runs
 * ```
 */
export async function takenPorts(ports: number[]): Promise<number[]> {
  const taken = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((done) => {
          const server = createServer();
          server.once("error", () => done(true));
          server.listen(port, "127.0.0.1", () => server.close(() => done(false)));
        }),
    ),
  );
  return ports.filter((_, i) => taken[i]);
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (for servers that cannot listen on port 0 and report
 * back, such as `wrangler dev`).
 *
 * @example
 * ```ts
 * const port = await freePort();
 * ```
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether a process of group `pgid` holds the listening TCP socket of `port` (Linux: the sockets of
 * `/proc/net/tcp` and `tcp6`, found among the group's open files); `undefined` where `/proc` cannot say (off
 * Linux). A listener of another user's process counts as not the group's: its files cannot be read.
 *
 * @example
 * ```ts
 * portHeldByGroup(8787, worker.child.pid as number); // true once wrangler's workerd listens there
 * ```
 */
export function portHeldByGroup(port: number, pgid: number): boolean | undefined {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const inodes = new Set<string>();
  let readable = false;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    readable = true;
    // `sl local_address rem_address st ... uid timeout inode`: state 0A is LISTEN.
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === "0A" && fields[1]?.endsWith(hex) && fields[9]) inodes.add(`socket:[${fields[9]}]`);
    }
  }
  if (!readable) return undefined;
  for (const pid of groupPids(pgid)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return false;
}

/**
 * Waits until a server process it started (`wrangler dev`, an engine) answers `url` with 200, and fails at once
 * if the process exits first (for example because its port was taken): answering is not enough, since
 * whatever took the port answers too. So a 200 counts only once the port is seen held by the process's own group
 * (`portHeldByGroup`; off Linux, the answer alone): another server that took the port first fails this at once.
 *
 * @example
 * ```ts
 * await waitForWorker(worker, "http://127.0.0.1:8787/health");
 * ```
 */
export async function waitForWorker(worker: ManagedProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let answered = false;
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
      throw new Error(
        `${worker.name} exited (${worker.child.exitCode ?? worker.child.signalCode}) before ${url} answered`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) answered = true;
    } catch {
      // not up yet
    }
    if (answered) {
      // Before, the first 200 was taken for the process's own, and a server that held the port (a race for a port
      // found free) passed for wrangler or the engine: wrangler only exits seconds later, on EADDRINUSE.
      const port = Number(new URL(url).port);
      if (port === 0 || portHeldByGroup(port, worker.child.pid as number) !== false) return;
      throw new Error(`${url} answered, but port ${port} is held by another process, not ${worker.name}'s`);
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `wrangler dev` on a free port of 127.0.0.1 and resolves once the Worker answers `/health`. A port can
 * be taken between finding it free and wrangler binding it (tests start servers side by side): then wrangler
 * exits, and this tries another port.
 *
 * @example
 * ```ts
 * const { worker, base } = await startWorkerOnFreePort({ vars: { SPILLWAY_CONFIG: config }, quiet: true });
 * await fetch(`${base}/v1/models`);
 * await worker.stop();
 * ```
 */
export async function startWorkerOnFreePort(
  options: Omit<WranglerDevOptions, "port">,
  attempts = 3,
): Promise<{ worker: ManagedProcess; port: number; base: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const worker = startWranglerDev({ ...options, port });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForWorker(worker, `${base}/health`);
      return { worker, port, base };
    } catch (error) {
      await worker.stop();
      if (attempt >= attempts) throw error;
    }
  }
}
