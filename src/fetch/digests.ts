import { createHash, type Hash } from 'node:crypto';

/**
 * Running sha256 (and md5 when an ETag can check it) of the bytes in the part. On the main thread:
 * measured on loopback (bench/fetch.ts), the download waits on the network and the disk, not on
 * hashing, and a worker thread for the digests cost ~50 MB of RSS for no gain in throughput. The
 * async `ready()`/`digest()` shape leaves room to move them off-thread if a faster link needs it.
 */
export interface DigestValues { sha256: string; md5: string | undefined }

export class Digests {
  private readonly sha256: Hash = createHash('sha256');
  private readonly md5: Hash | undefined;

  constructor(readonly withMd5: boolean) {
    this.md5 = withMd5 ? createHash('md5') : undefined;
  }

  update(buf: Uint8Array): void {
    this.sha256.update(buf);
    this.md5?.update(buf);
  }

  /** Resolves when more bytes may be queued (always at once in-thread). */
  ready(): Promise<void> {
    return Promise.resolve();
  }

  digest(): Promise<DigestValues> {
    return Promise.resolve({ sha256: this.sha256.digest('hex'), md5: this.md5?.digest('hex') });
  }

  /** Nothing to release in-thread; kept so callers stay correct if the digests move to a worker. */
  close(): void {}
}
