/**
 * A binary min-heap ordered by a numeric key: push, peek and pop in O(log n). Ties leave in no promised order.
 * Pure; the core's schedules keep their due instants in it. A NaN key, which compares false with everything and
 * would break the order silently, is refused with a RangeError (the infinities order like any number).
 *
 * @example
 * ```ts
 * const due = new MinHeap<{ atMs: number }>((e) => e.atMs);
 * due.push({ atMs: 30 });
 * due.push({ atMs: 10 });
 * due.pop(); // { atMs: 10 }
 * due.size; // 1
 * ```
 */
export class MinHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly keyOf: (item: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  /** The item with the smallest key, left in place. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    const key = this.keyOf(item);
    if (Number.isNaN(key)) throw new RangeError("MinHeap: an item's key is NaN");
    let i = items.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keyOf(items[parent] as T) <= key) break;
      items[i] = items[parent] as T;
      i = parent;
    }
    items[i] = item;
  }

  /** Removes and returns the item with the smallest key. */
  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    this.siftDown(0, last);
    return top;
  }

  /**
   * Keeps only the items `keep` accepts, in O(n): how a holder whose items go stale (and are skipped when popped)
   * keeps their count bounded.
   *
   * @example
   * ```ts
   * due.retain((e) => live.has(e.id));
   * ```
   */
  retain(keep: (item: T) => boolean): void {
    const items = this.items;
    let kept = 0;
    for (const item of items) if (keep(item)) items[kept++] = item;
    items.length = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i, items[i] as T);
  }

  /** Puts `item` at `i` or below it, its smaller children moving up. */
  private siftDown(start: number, item: T): void {
    const items = this.items;
    const key = this.keyOf(item);
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && this.keyOf(items[right] as T) < this.keyOf(items[left] as T) ? right : left;
      if (this.keyOf(items[child] as T) >= key) break;
      items[i] = items[child] as T;
      i = child;
    }
    items[i] = item;
  }
}
