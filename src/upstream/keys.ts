import { AuthError, UsageError, type ErrorCode } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';

/**
 * API keys: admin keys start `svc_`, assistant keys `svc_dsc_`. Keys come only from the
 * environment or a file — never argv, where `ps` would show them (secrets come from the environment only).
 * No message here ever contains the key itself, only its kind.
 */
export type KeyKind = 'admin' | 'assistant';

/** Header-safe token characters only: a key with CR/LF could inject headers (CWE-113). */
const KEY_CHARS = /^[A-Za-z0-9_-]+$/;

/** A key file holds one key and a newline; anything bigger is not a key file. */
const KEY_FILE_MAX_BYTES = 4096;

/**
 * AIRLOCK_ADMIN_KEY or AIRLOCK_ADMIN_KEY_FILE, trimmed. Both set is a usage error: silently
 * preferring one would let a stale variable send the wrong organisation's key.
 */
export function readAdminKey(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return readEnvSecret(env, 'AIRLOCK_ADMIN_KEY', 'AIRLOCK_ADMIN_KEY_FILE');
}

/**
 * A secret from the environment: `NAME`, or the file named by `NAME_FILE` (a regular file, at
 * most 4 KB, read non-blocking so a FIFO or /dev/zero never hangs the run), trimmed. Both set is a
 * usage error. The messages name the variable and the file, never the secret.
 */
export async function readEnvSecret(env: NodeJS.ProcessEnv, name: string, code: ErrorCode = 'AIRLOCK_USAGE'): Promise<string | undefined> {
  const direct = env[name]?.trim();
  const file = env[`${name}_FILE`]?.trim();
  if (direct && file) {
    throw new UsageError(`both ${name} and ${name}_FILE are set; set only one`, { subject: `${name}_FILE` });
  }
  if (direct) return direct;
  if (!file) return undefined;
  const refuse = (why: string) => new UsageError(`${name}_FILE ${file} ${why}`, { subject: file }, code);
  const text = (await readRegularFile(file, { maxBytes: KEY_FILE_MAX_BYTES, refuse })).toString('utf8');
  const key = text.trim();
  if (!key) throw refuse('is empty');
  return key;
}

/** Which kind a key is by its prefix, or null when it is no service key at all. */
export function keyKind(key: string): KeyKind | null {
  if (!KEY_CHARS.test(key)) return null;
  if (key.startsWith('svc_dsc_')) return 'assistant';
  if (key.startsWith('svc_')) return 'admin';
  return null;
}

/**
 * The key to send for an endpoint of `kind`, checked locally before any request: a missing key or
 * an assistant key on an admin endpoint is an AuthError (exit 5) and never reaches the network.
 */
export function checkKeyType(key: string | undefined, kind: KeyKind): string {
  const wanted = kind === 'admin' ? 'an admin key (svc_...)' : 'an assistant key (svc_dsc_...)';
  if (!key) {
    const hint = kind === 'admin' ? '; set AIRLOCK_ADMIN_KEY or AIRLOCK_ADMIN_KEY_FILE' : '';
    throw new AuthError(`no API key: this endpoint needs ${wanted}${hint}`, { subject: kind }, 'AIRLOCK_AUTH_MISSING');
  }
  const got = keyKind(key);
  if (got !== kind) {
    const what = got === 'assistant' ? 'an assistant key (svc_dsc_...)' : got === 'admin' ? 'an admin key' : 'a value that is not a service key';
    throw new AuthError(`wrong key type: got ${what}, this endpoint needs ${wanted}`, { subject: kind }, 'AIRLOCK_WRONG_KEY_TYPE');
  }
  return key;
}
