import { UsageError } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';

/**
 * The mirror token a follower sends (never a flag: it would show in ps): follow.tokenFile of the
 * values file, else AIRLOCK_MIRROR_TOKEN, else the file named by AIRLOCK_MIRROR_TOKEN_FILE.
 * A file is read whole, at most 4 KiB, trimmed: a regular file only, opened non-blocking, so a
 * FIFO or a device is refused in words instead of hanging the start.
 */
const TOKEN_FILE_MAX_BYTES = 4096;

export async function followToken(tokenFile: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  const file = tokenFile ?? env.AIRLOCK_MIRROR_TOKEN_FILE;
  let token = tokenFile === undefined ? env.AIRLOCK_MIRROR_TOKEN : undefined;
  if (token === undefined && file !== undefined) {
    const what = tokenFile === undefined ? 'AIRLOCK_MIRROR_TOKEN_FILE' : 'follow.tokenFile';
    const buf = await readRegularFile(file, {
      maxBytes: TOKEN_FILE_MAX_BYTES,
      refuse: (why) => new UsageError(`mirror token file ${file} (${what}) ${why}`, { subject: file }, 'AIRLOCK_MIRROR_TOKEN_FILE'),
    });
    token = buf.toString('utf8').trim();
  }
  if (token === undefined || token === '') {
    throw new UsageError('--follow needs the mirror token: set AIRLOCK_MIRROR_TOKEN or AIRLOCK_MIRROR_TOKEN_FILE (or follow.tokenFile in the values file)', {
      subject: 'AIRLOCK_MIRROR_TOKEN',
    });
  }
  if (!/^\S{1,4096}$/.test(token))
    throw new UsageError('the mirror token must be one word with no spaces or control characters', { subject: 'AIRLOCK_MIRROR_TOKEN' });
  return token;
}
