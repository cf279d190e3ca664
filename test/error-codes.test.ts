import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AirlockError, ERROR_CODES, UsageError } from '../src/errors.js';

const root = new URL('..', import.meta.url);
/** Names in the guides that look like codes but are settings: environment variables and chart values. */
const SETTINGS = new Set([
  'AIRLOCK_ADMIN_KEY',
  'AIRLOCK_API_URL',
  'AIRLOCK_ASSISTANT_KEY',
  'AIRLOCK_ASSISTANT_MODEL_KEY',
  'AIRLOCK_ASSISTANT_MODEL_KEY_FILE',
  'AIRLOCK_DEBUG',
  'AIRLOCK_MIRROR_TOKEN',
  'AIRLOCK_STORE',
  'AIRLOCK_CHROMIUM',
  'AIRLOCK_ALLOW_DOWNGRADE',
  'AIRLOCK_PORT',
  'AIRLOCK_IMAGE_NODE',
]);

describe('error codes', () => {
  it('are unique', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it('every code the README and the guides name is one the tool can give (a script matching on it would never fire)', () => {
    const pages = [
      'README.md',
      ...readdirSync(new URL('docs/', root))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const unknown: string[] = [];
    for (const page of pages) {
      for (const m of readFileSync(new URL(page, root), 'utf8').matchAll(/AIRLOCK_[A-Z0-9_]+/g)) {
        if (!SETTINGS.has(m[0]) && !(ERROR_CODES as readonly string[]).includes(m[0])) unknown.push(`${page}: ${m[0]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('travel in --json and in the bracket of the message unchanged', () => {
    const err = new UsageError('bad flag', { subject: '--x' }, 'AIRLOCK_EXISTS');
    expect(err).toBeInstanceOf(AirlockError);
    expect(err.toJSON()).toMatchObject({ code: 'AIRLOCK_EXISTS', exitCode: 2, subject: '--x' });
  });
});
