/** A growable Uint32Array (the compact index's build buffers): starts small, doubles when full. */
export class Grow32 {
  /** Nothing, for a finished index (never pushed to). */
  static readonly EMPTY = new Grow32(0);
  a: Uint32Array;
  n = 0;
  constructor(size = 1 << 10) {
    this.a = new Uint32Array(size);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Uint32Array(Math.max(1 << 10, this.a.length * 2));
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
}
