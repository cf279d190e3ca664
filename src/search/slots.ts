/**
 * How many versions' search indexes a process keeps loaded at once, whoever holds them (a
 * library's sites each have their own LocalSearch): past `max`, the one queried longest ago is
 * let go (its worker ends; its next query loads it again, from its cache file). Without a bound
 * every site a reader searched once would keep a worker thread and its index for ever.
 */
export class SearchSlots {
  /** Holders in the order of their last use, the oldest first (a Map keeps insertion order). */
  private readonly held = new Map<object, () => void>();

  constructor(readonly max: number) {}

  /** `key` now holds an index (or was just queried); `evict` lets it go when room is needed. */
  use(key: object, evict: () => void): void {
    this.held.delete(key);
    this.held.set(key, evict);
    while (this.held.size > this.max) {
      const [oldest, drop] = this.held.entries().next().value!;
      this.held.delete(oldest);
      drop();
    }
  }

  /** `key` let its index go by itself. */
  release(key: object): void {
    this.held.delete(key);
  }

  get size(): number {
    return this.held.size;
  }
}
