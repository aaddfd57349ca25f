import { batchSeconds, type TimingModel } from "../engine/timing-model";
import { type Batch, type RequestView, Scheduler, type SchedulerOptions } from "../scheduler/index";
import type { EventLoop } from "./event-loop";

/** A request as a replica receives it. */
export interface ReplicaRequest {
  id: string;
  promptTokenIds: number[];
  maxTokens: number;
  /** Tokens after which the simulated model stops (EOS); `maxTokens` means it runs to the limit. */
  outputTokens: number;
}

/** Any token id other than an EOS: the simulator never looks at text. */
const TOKEN = 42;

/**
 * One engine server in virtual time: the real token-budget {@link Scheduler} decides every batch, the
 * engine's {@link TimingModel} says how long it takes, and the event loop advances the clock instead of
 * sleeping - the same split as the engine server's loop (src/engine/engine-loop.ts), minus HTTP and text.
 *
 * `queueLength` is what the engine's `GET /load` reports: running + waiting requests.
 *
 * @example
 * ```ts
 * const replica = new SimReplica("r0", loop, { maxTotalTokens: 16384 }, defaultTimingModel);
 * replica.submit({ id: "a", promptTokenIds: [1, 2, 3], maxTokens: 8, outputTokens: 8 }, (ok) => {});
 * loop.run();
 * ```
 */
export class SimReplica {
  private readonly scheduler: Scheduler;
  private readonly live = new Map<string, { request: ReplicaRequest; done: (ok: boolean) => void }>();
  private busy = false;
  /** Called whenever the queue length changes (for the idle-capacity meter). */
  onLoadChange: (delta: number) => void = () => {};

  constructor(
    readonly name: string,
    private readonly loop: EventLoop,
    schedulerOptions: SchedulerOptions,
    private readonly timing: TimingModel,
  ) {
    this.scheduler = new Scheduler(schedulerOptions);
  }

  get queueLength(): number {
    return this.live.size;
  }

  /** Accepts a forwarded request; `done(true)` when its response has ended, `done(false)` if it was aborted. */
  submit(request: ReplicaRequest, done: (ok: boolean) => void): void {
    this.scheduler.submit({
      id: request.id,
      promptTokenIds: request.promptTokenIds,
      maxNewTokens: request.maxTokens,
      ignoreEos: request.outputTokens >= request.maxTokens,
    });
    this.live.set(request.id, { request, done });
    this.onLoadChange(1);
    if (!this.busy) this.step();
  }

  private end(id: string, ok: boolean): void {
    const entry = this.live.get(id);
    if (!entry) return;
    this.live.delete(id);
    this.onLoadChange(-1);
    entry.done(ok);
  }

  private step(): void {
    const batch = this.scheduler.nextBatch(this.loop.now() / 1000);
    for (const e of batch.ended) this.end(e.id, false);
    if (batch.kind === "idle") {
      this.busy = false;
      return;
    }
    this.busy = true;
    this.loop.after(batchSeconds(this.timing, batch) * 1000, () => this.complete(batch));
  }

  private complete(batch: Exclude<Batch, { kind: "idle" }>): void {
    const items: RequestView[] = [];
    if (batch.kind === "prefill") {
      for (const e of batch.entries) if (e.lastChunk) items.push(e.request);
    } else {
      items.push(...batch.requests);
    }
    const stopped: string[] = [];
    for (const r of items) {
      const entry = this.live.get(r.id);
      // This step's token is the (length + 1)-th: the model stops when it reaches its output length.
      if (entry && r.outputTokenIds.length + 1 >= entry.request.outputTokens) stopped.push(r.id);
    }
    const count = batch.kind === "prefill" ? batch.entries.length : batch.requests.length;
    const { ended } = this.scheduler.completeBatch({ tokenIds: new Array<number>(count).fill(TOKEN), stopped });
    for (const e of ended) this.end(e.id, e.reason !== "abort");
    this.step();
  }
}
