import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { UpstreamIdleTimeout, withIdleDeadline } from "../../../src/edge/idle-deadline";
import { stallingBody } from "../../support/stalling-body";

/** A replica's body: `chunks` at once, then nothing until it is cancelled (an engine hung mid-stream). */
function hangingAfter(chunks: string[]): { reader: ReadableStreamDefaultReader<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  const stream = stallingBody(chunks, () => {
    cancelled = true;
  });
  return { reader: stream.getReader(), cancelled: () => cancelled };
}

describe("withIdleDeadline (fake clock)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds no timer for a body nobody reads, however long it waits", async () => {
    const upstream = hangingAfter(['data: {"a":1}\n\n', 'data: {"a":2}\n\n']);
    const timers = vi.spyOn(globalThis, "setTimeout");
    const onTimeout = vi.fn();
    withIdleDeadline(undefined, upstream.reader, 1000, onTimeout);
    await vi.advanceTimersByTimeAsync(60_000);
    // The stream's own first pull (its queue wants one chunk) reads a chunk that is there, then nothing asks for
    // more: one timer, which lapses. Before: armed at once and again every second, 60 in a minute.
    expect(timers.mock.calls.filter(([, ms]) => ms === 1000).length).toBeLessThanOrEqual(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(onTimeout).not.toHaveBeenCalled();
    timers.mockRestore();
  });

  it("fails a read that waits on the replica longer than the deadline, cancelling its body, once", async () => {
    const upstream = hangingAfter(["data: 1\n\n"]);
    const onTimeout = vi.fn();
    const reader = withIdleDeadline(undefined, upstream.reader, 1000, onTimeout).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 1\n\n");
    const next = reader.read().then(
      () => "read",
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(await next).toBeInstanceOf(UpstreamIdleTimeout);
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(upstream.cancelled()).toBe(true);
  });

  it("spends none of the deadline while the client does not read", async () => {
    const upstream = hangingAfter(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]);
    const onTimeout = vi.fn();
    const reader = withIdleDeadline(undefined, upstream.reader, 1000, onTimeout).getReader();
    await reader.read();
    // A slow client: ten deadlines pass between its reads, the replica had each chunk ready.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 2\n\n");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 3\n\n");
    expect(onTimeout).not.toHaveBeenCalled();
    expect(upstream.cancelled()).toBe(false);
  });
});
