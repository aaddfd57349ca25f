/**
 * The KV pool as a count of free pages. The scheduler only needs how many slots are free, not which ones,
 * so a counter is the whole allocator; `release` refuses to free more than was taken, which turns a
 * double free into an immediate error instead of a silently growing pool.
 */

/**
 * Page-granular slot counter.
 *
 * @example
 * ```ts
 * const pool = new PagePool(4096, 1);
 * pool.allocate(256); // 3840 pages left
 * pool.release(256);
 * ```
 */
export class PagePool {
  readonly pageSize: number;
  readonly totalPages: number;
  /** Free pages. */
  freePages: number;

  constructor(maxTotalTokens: number, pageSize: number) {
    this.pageSize = pageSize;
    this.totalPages = Math.floor(maxTotalTokens / pageSize);
    this.freePages = this.totalPages;
  }

  /** Capacity in token slots (whole pages only). */
  get capacityTokens(): number {
    return this.totalPages * this.pageSize;
  }

  /** Free token slots. */
  get freeTokens(): number {
    return this.freePages * this.pageSize;
  }

  /** Take `pages` pages; the caller has made room first (by eviction), so running short is a bug. */
  allocate(pages: number): void {
    checkPages(pages);
    if (pages > this.freePages) throw new Error(`KV pool: allocating ${pages} pages with ${this.freePages} free`);
    this.freePages -= pages;
  }

  /** Return `pages` pages. */
  release(pages: number): void {
    checkPages(pages);
    if (this.freePages + pages > this.totalPages) {
      throw new Error(`KV pool: releasing ${pages} pages would exceed the pool (${this.freePages} free)`);
    }
    this.freePages += pages;
  }
}

/** A page count is a whole number, not negative: anything else would corrupt the counter silently. */
function checkPages(pages: number): void {
  if (!Number.isInteger(pages) || pages < 0) throw new Error(`KV pool: bad page count ${pages}`);
}

/**
 * Round a token count up to whole pages, in tokens.
 *
 * @example
 * ```ts
 * ceilToPage(10, 4); // 12
 * ```
 */
export function ceilToPage(tokens: number, pageSize: number): number {
  return pageSize === 1 ? tokens : Math.ceil(tokens / pageSize) * pageSize;
}

/**
 * Round a token count down to whole pages, in tokens.
 *
 * @example
 * ```ts
 * floorToPage(10, 4); // 8
 * ```
 */
export function floorToPage(tokens: number, pageSize: number): number {
  return pageSize === 1 ? tokens : Math.floor(tokens / pageSize) * pageSize;
}
