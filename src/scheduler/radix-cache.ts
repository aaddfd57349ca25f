/**
 * A radix tree over token ids that remembers which prefixes already have KV in the pool (SGLang's
 * RadixCache). Edges are whole pages. A node is locked while a running request uses its prefix (the lock
 * counts every request on the path, so an unlocked node has only unlocked descendants and its whole subtree
 * can go); eviction removes unlocked leaves, least recently used first.
 * The tree owns the slots of its nodes; it reports freed token counts and the caller returns them to the pool.
 */

/**
 * A node: the edge from its parent carries `key` (a whole number of pages).
 *
 * @example
 * ```ts
 * const { node, length } = cache.match(tokens, tokens.length - 1);
 * ```
 */
export class RadixNode {
  key: number[];
  readonly children = new Map<number | string, RadixNode>();
  parent: RadixNode | null;
  lockRef = 0;
  lastAccess = 0;

  constructor(key: number[], parent: RadixNode | null) {
    this.key = key;
    this.parent = parent;
  }
}

/**
 * Result of a prefix match or insert.
 *
 * @example
 * ```ts
 * const m: PrefixMatch = cache.match([1, 2, 3], 2);
 * ```
 */
export interface PrefixMatch {
  /** The deepest node of the match (the root when nothing matched). */
  node: RadixNode;
  /** Matched tokens (a whole number of pages). */
  length: number;
}

/**
 * The prefix cache.
 *
 * @example
 * ```ts
 * const cache = new RadixCache(1);
 * const ins = cache.insert([1, 2, 3, 4], 4); // 4 new tokens now owned by the tree
 * cache.lock(ins.node); // in use: not evictable
 * cache.unlock(ins.node);
 * cache.evict(4); // 4 tokens freed
 * ```
 */
export class RadixCache {
  readonly root = new RadixNode([], null);
  readonly pageSize: number;
  /** Tokens held by all nodes. */
  totalTokens = 0;
  /** Tokens held by unlocked nodes. */
  evictableTokens = 0;
  /** Logical clock for LRU (deterministic, unlike wall time). */
  private tick = 0;

  constructor(pageSize: number) {
    this.pageSize = pageSize;
    this.root.lockRef = 1; // the root is never evicted
  }

  private childKey(tokens: readonly number[], at: number): number | string {
    if (this.pageSize === 1) return tokens[at] as number;
    return tokens.slice(at, at + this.pageSize).join(",");
  }

  /** Length of the common prefix of `node.key` and `tokens[at, end)`, rounded down to pages. */
  private common(node: RadixNode, tokens: readonly number[], at: number, end: number): number {
    const key = node.key;
    const n = Math.min(key.length, end - at);
    let i = 0;
    while (i < n && key[i] === tokens[at + i]) i++;
    return this.pageSize === 1 ? i : Math.floor(i / this.pageSize) * this.pageSize;
  }

  /** Cut `child`'s edge after `at` tokens; returns the new upper node (the child keeps the lower part). */
  private split(child: RadixNode, at: number): RadixNode {
    const parent = child.parent as RadixNode;
    const upper = new RadixNode(child.key.slice(0, at), parent);
    upper.lockRef = child.lockRef;
    upper.lastAccess = child.lastAccess;
    parent.children.set(this.childKey(child.key, 0), upper);
    child.key = child.key.slice(at);
    child.parent = upper;
    upper.children.set(this.childKey(child.key, 0), child);
    return upper;
  }

  /**
   * Longest cached prefix of `tokens[0, maxLength)` in whole pages; touches the path (LRU), and the rest of an
   * edge it ends inside (as SGLang does: it touches an edge before splitting it). SGLang caps
   * `maxLength` at the sequence length minus one so that a prefill always computes at least one token.
   */
  match(tokens: readonly number[], maxLength: number): PrefixMatch {
    const end = Math.floor(Math.min(maxLength, tokens.length) / this.pageSize) * this.pageSize;
    const tick = ++this.tick;
    let node = this.root;
    let pos = 0;
    node.lastAccess = tick;
    while (pos < end) {
      const child = node.children.get(this.childKey(tokens, pos));
      if (child === undefined) break;
      const n = this.common(child, tokens, pos, end);
      if (n === 0) break;
      // SGLang touches the whole edge before splitting it: the unmatched rest of it is as fresh as the match.
      child.lastAccess = tick;
      const next = n < child.key.length ? this.split(child, n) : child;
      next.lastAccess = tick;
      node = next;
      pos += n;
      if (n < child.key.length) break;
    }
    return { node, length: pos };
  }

  /**
   * Insert `tokens[0, length)` (`length` in whole pages). Returns the deepest node and `length` = how many of
   * those tokens were already in the tree (the caller frees its duplicate slots for that part and hands the
   * rest, `length - existing`, to the tree).
   */
  insert(tokens: readonly number[], length: number): PrefixMatch {
    const tick = ++this.tick;
    let node = this.root;
    let pos = 0;
    while (pos < length) {
      const child = node.children.get(this.childKey(tokens, pos));
      if (child === undefined) {
        const leaf = new RadixNode(tokens.slice(pos, length), node);
        // Newer than the path, and than the rest of an edge it split off (SGLang's clock has moved on by then):
        // two leaves never share an access time.
        leaf.lastAccess = ++this.tick;
        node.children.set(this.childKey(tokens, pos), leaf);
        this.totalTokens += length - pos;
        this.evictableTokens += length - pos;
        return { node: leaf, length: pos };
      }
      const n = this.common(child, tokens, pos, length);
      if (n === 0) throw new Error("radix cache: a child key matched no page"); // unreachable: keys are pages
      child.lastAccess = tick; // the whole edge, as in match
      const next = n < child.key.length ? this.split(child, n) : child;
      next.lastAccess = tick;
      node = next;
      pos += n;
    }
    return { node, length: pos };
  }

  /** A request starts using the prefix ending at `node`: the whole path becomes unevictable. */
  lock(node: RadixNode): void {
    for (let n: RadixNode | null = node; n !== null; n = n.parent) {
      if (n.lockRef === 0) this.evictableTokens -= n.key.length;
      n.lockRef++;
    }
  }

  /** Undo one {@link lock}. */
  unlock(node: RadixNode): void {
    // Checked along the whole path first: the root's own lock of 1 would hide a second unlock of a request that
    // held only the root (nothing cached), and an unlocked root is later popped as a leaf.
    for (let n: RadixNode | null = node; n !== null; n = n.parent)
      if (n.lockRef <= (n === this.root ? 1 : 0)) throw new Error("radix cache: unlocking an unlocked node");
    for (let n: RadixNode | null = node; n !== null; n = n.parent) {
      n.lockRef--;
      if (n.lockRef === 0) this.evictableTokens += n.key.length;
    }
  }

  /** Evict unlocked leaves, least recently used first, until `tokens` are freed or nothing is left; returns freed. */
  evict(tokens: number): number {
    if (tokens <= 0 || this.evictableTokens === 0) return 0;
    const heap = new LeafHeap();
    const stack: RadixNode[] = [this.root];
    while (stack.length > 0) {
      const n = stack.pop() as RadixNode;
      if (n.children.size === 0) {
        if (n.lockRef === 0) heap.push(n);
      } else for (const c of n.children.values()) stack.push(c);
    }
    let freed = 0;
    while (freed < tokens && heap.size > 0) {
      const leaf = heap.pop();
      const parent = leaf.parent as RadixNode;
      parent.children.delete(this.childKey(leaf.key, 0));
      leaf.parent = null;
      freed += leaf.key.length;
      this.totalTokens -= leaf.key.length;
      this.evictableTokens -= leaf.key.length;
      if (parent.children.size === 0 && parent.lockRef === 0) heap.push(parent);
    }
    return freed;
  }

  /** Every node but the root (for audits). */
  *nodes(): IterableIterator<RadixNode> {
    const stack: RadixNode[] = [...this.root.children.values()];
    while (stack.length > 0) {
      const n = stack.pop() as RadixNode;
      yield n;
      for (const c of n.children.values()) stack.push(c);
    }
  }
}

/** Min-heap of nodes by `lastAccess` (LRU first). */
class LeafHeap {
  private readonly items: RadixNode[] = [];

  get size(): number {
    return this.items.length;
  }

  push(node: RadixNode): void {
    const a = this.items;
    a.push(node);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as RadixNode).lastAccess <= node.lastAccess) break;
      a[i] = a[p] as RadixNode;
      i = p;
    }
    a[i] = node;
  }

  pop(): RadixNode {
    const a = this.items;
    const top = a[0] as RadixNode;
    const last = a.pop() as RadixNode;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && (a[r] as RadixNode).lastAccess < (a[l] as RadixNode).lastAccess ? r : l;
        if ((a[c] as RadixNode).lastAccess >= last.lastAccess) break;
        a[i] = a[c] as RadixNode;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
