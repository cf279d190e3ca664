import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthError, EXIT, UsageError } from '../../src/errors.js';
import { checkKeyType, keyKind, readAdminKey } from '../../src/upstream/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ADMIN = 'svc_testadmin0123456789';
const ASSISTANT = 'svc_dsc_testassistant0123';

describe('readAdminKey', () => {
  it('reads AIRLOCK_ADMIN_KEY trimmed, or the file trimmed', async () => {
    expect(await readAdminKey({ AIRLOCK_ADMIN_KEY: `  ${ADMIN}\n` })).toBe(ADMIN);
    const f = join(dir, 'k');
    writeFileSync(f, `${ADMIN}\n`);
    expect(await readAdminKey({ AIRLOCK_ADMIN_KEY_FILE: f })).toBe(ADMIN);
    expect(await readAdminKey({})).toBeUndefined();
  });

  it('both variables set is a usage error (never silently picks one)', async () => {
    await expect(readAdminKey({ AIRLOCK_ADMIN_KEY: ADMIN, AIRLOCK_ADMIN_KEY_FILE: '/x' })).rejects.toBeInstanceOf(UsageError);
  });

  it('a missing or empty key file is a usage error naming the file, not the key', async () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '  \n');
    await expect(readAdminKey({ AIRLOCK_ADMIN_KEY_FILE: empty })).rejects.toThrow(/is empty/);
    const err = await readAdminKey({ AIRLOCK_ADMIN_KEY_FILE: join(dir, 'nope') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toMatchObject({ code: 'AIRLOCK_ADMIN_KEY_FILE', exitCode: 2, details: { subject: join(dir, 'nope') } });
    expect((err as Error).message).toContain('does not exist');
    expect((err as Error).message).not.toMatch(/\bE[A-Z]{3,}\b/);
  });
});

describe('checkKeyType', () => {
  it('classifies keys by prefix', () => {
    expect(keyKind(ADMIN)).toBe('admin');
    expect(keyKind(ASSISTANT)).toBe('assistant');
    expect(keyKind('sk_live_abc')).toBeNull();
    expect(keyKind('svc_abc\r\nX-Evil: 1')).toBeNull();
  });

  it('assistant key on an admin endpoint: AuthError exit 5, message without the key', () => {
    const err = (() => {
      try {
        checkKeyType(ASSISTANT, 'admin');
      } catch (e) {
        return e;
      }
    })() as AuthError;
    expect(err).toBeInstanceOf(AuthError);
    expect(err.exitCode).toBe(EXIT.AUTH);
    expect(err.code).toBe('AIRLOCK_WRONG_KEY_TYPE');
    expect(err.message).not.toContain(ASSISTANT);
  });

  it('missing key: AuthError AIRLOCK_AUTH_MISSING; right key passes', () => {
    expect(() => checkKeyType(undefined, 'admin')).toThrow(expect.objectContaining({ code: 'AIRLOCK_AUTH_MISSING', exitCode: 5 }));
    expect(() => checkKeyType(ADMIN, 'assistant')).toThrow(expect.objectContaining({ code: 'AIRLOCK_WRONG_KEY_TYPE' }));
    expect(checkKeyType(ADMIN, 'admin')).toBe(ADMIN);
    expect(checkKeyType(ASSISTANT, 'assistant')).toBe(ASSISTANT);
  });

  it('header injection: a key with CR/LF is refused before it reaches a header', () => {
    expect(() => checkKeyType('svc_abc\r\nX-Evil: 1', 'admin')).toThrow(AuthError);
  });
});
