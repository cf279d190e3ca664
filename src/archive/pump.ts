import { finished } from 'node:stream/promises';
import type { ArchiveEntry } from './types.js';
import type { Channel } from './channel.js';

/**
 * The async generator over a channel of entries. One entry at a time: before handing out the
 * next, the previous stream is drained (if the caller skipped it) and must end cleanly, so an
 * error in its body (truncation, bomb, CRC) surfaces here too. `stop` frees the input early.
 */
export async function* pumpEntries(ch: Channel<ArchiveEntry>, stop: () => void): AsyncGenerator<ArchiveEntry> {
  try {
    for (;;) {
      const e = await ch.next();
      if (!e) return;
      yield e;
      if (!e.stream.readableEnded) e.stream.resume();
      await finished(e.stream);
    }
  } finally {
    stop();
  }
}
