import { type ChildProcess, fork } from "node:child_process";

/**
 * Forks a TypeScript module as a Node child process with an IPC channel (`node --import tsx <module>`; Node 20
 * cannot run .ts by itself). Its output goes to this process's stdout and stderr. It stays in this process's
 * group, so a Ctrl-C in the terminal reaches it too; the modules of eval:e2e also exit when the IPC channel closes,
 * which happens when this process dies however it dies.
 *
 * @example
 * ```ts
 * const proxy = forkTypeScript("eval/e2e-proxy.ts", ["http://127.0.0.1:8787"], root);
 * const ready = await nextMessage(proxy, (m: { type: string }) => m.type === "ready", 30_000);
 * ```
 */
export function forkTypeScript(modulePath: string, args: string[], cwd: string): ChildProcess {
  return fork(modulePath, args, {
    cwd,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/**
 * Resolves with the first message from `child` that `accept` takes; rejects if the child exits first or
 * `timeoutMs` passes.
 *
 * @example
 * ```ts
 * const { port } = await nextMessage(proxy, (m: { type: string; port?: number }) => m.type === "ready", 30_000);
 * ```
 */
export function nextMessage<T>(child: ChildProcess, accept: (message: T) => boolean, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    const onMessage = (message: unknown) => {
      if (!accept(message as T)) return;
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      reject(new Error(`child ${child.pid} exited (${code ?? signal}) before the expected message`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`child ${child.pid} sent no expected message within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

/** Whether a child process has exited (or was killed). */
export const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/**
 * Stops a child: SIGTERM, then SIGKILL if it is still running after `graceMs`; resolves once it has exited.
 *
 * @example
 * ```ts
 * await stopChild(proxy);
 * ```
 */
export async function stopChild(child: ChildProcess, graceMs = 2_000): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (!hasExited(child)) child.kill("SIGKILL");
  }, graceMs);
  await exited;
  clearTimeout(timer);
}
