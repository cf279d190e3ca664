import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';

/**
 * The mirror token a follower sends (never a flag: it would show in ps): follow.tokenFile of the
 * values file, else AIRLOCK_MIRROR_TOKEN, else the file named by AIRLOCK_MIRROR_TOKEN_FILE.
 * A file is read whole, at most 4 KiB, trimmed.
 */
export async function followToken(tokenFile: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  const file = tokenFile ?? env.AIRLOCK_MIRROR_TOKEN_FILE;
  let token = tokenFile === undefined ? env.AIRLOCK_MIRROR_TOKEN : undefined;
  if (token === undefined && file !== undefined) {
    const buf = await readFile(file).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read the mirror token file ${file}: ${err.code ?? err.message}`, { subject: file });
    });
    if (buf.length > 4096) throw new UsageError(`mirror token file ${file} is ${buf.length} bytes; a token is at most 4096`, { subject: file });
    token = buf.toString('utf8').trim();
  }
  if (token === undefined || token === '') {
    throw new UsageError('--follow needs the mirror token: set AIRLOCK_MIRROR_TOKEN or AIRLOCK_MIRROR_TOKEN_FILE (or follow.tokenFile in the values file)', { subject: 'AIRLOCK_MIRROR_TOKEN' });
  }
  if (!/^\S{1,4096}$/.test(token)) throw new UsageError('the mirror token must be one word with no spaces or control characters', { subject: 'AIRLOCK_MIRROR_TOKEN' });
  return token;
}
