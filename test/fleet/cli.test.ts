import { describe, it, expect } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkValues, mergeSettings } from '../../src/values/index.js';
import { followToken } from '../../src/fleet/index.js';
import { run, tempDir } from '../mirror/helpers.js';

describe('serve --follow: options', () => {
  it('the values file sets the follower, the mirror lead and the skew grace; flags win', () => {
    const { values, warnings } = checkValues(
      {
        follow: { url: 'http://mirror.internal:8080', tokenFile: '/run/token', trust: ['/keys/a.pub'], allowUnsigned: false, pollSeconds: 1.5 },
        mirror: { fleetLeadSeconds: 3 },
        skewGraceSeconds: 120,
      },
      'values.yaml',
    );
    expect(warnings).toEqual([]);
    const s = mergeSettings({}, values);
    expect(s.follow).toEqual({ url: 'http://mirror.internal:8080', tokenFile: '/run/token', trust: ['/keys/a.pub'], allowUnsigned: false, pollMs: 1500 });
    expect(s.skewGrace).toBe('120');
    const f = mergeSettings({ follow: 'https://other:1', 'follow-poll-ms': '500', trust: ['/k.pub'], 'skew-grace': '0' }, values);
    expect(f.follow).toMatchObject({ url: 'https://other:1', pollMs: 500, trust: ['/k.pub'] });
    expect(f.skewGrace).toBe('0');
    expect(() => checkValues({ follow: { url: 'ftp://x', pollSeconds: 'fast' } }, 'v.yaml')).toThrow(/follow\.url[\s\S]*follow\.pollSeconds/);
    expect(() => mergeSettings({ follow: 'not a url' })).toThrow(/--follow needs/);
    expect(() => mergeSettings({ follow: 'http://m', 'follow-poll-ms': '5' })).toThrow(/--follow-poll-ms/);
  });

  it('the token: never a flag; from the values file, AIRLOCK_MIRROR_TOKEN or AIRLOCK_MIRROR_TOKEN_FILE; missing is exit 2', async () => {
    const t = await tempDir('airlock-follow-cli-');
    try {
      const f = join(t.dir, 'token');
      await writeFile(f, 'svc_from_file_xxxxxxxx\n');
      expect(await followToken(f, { AIRLOCK_MIRROR_TOKEN: 'svc_env' })).toBe('svc_from_file_xxxxxxxx');
      expect(await followToken(undefined, { AIRLOCK_MIRROR_TOKEN: 'svc_env' })).toBe('svc_env');
      expect(await followToken(undefined, { AIRLOCK_MIRROR_TOKEN_FILE: f })).toBe('svc_from_file_xxxxxxxx');
      await expect(followToken(undefined, {})).rejects.toMatchObject({ exitCode: 2 });
      await expect(followToken(undefined, { AIRLOCK_MIRROR_TOKEN: 'two words' })).rejects.toMatchObject({ exitCode: 2 });
      const env = { AIRLOCK_MIRROR_TOKEN: '', AIRLOCK_MIRROR_TOKEN_FILE: '' };
      const noToken = await run(['serve', '--store', join(t.dir, 's'), '--follow', 'http://127.0.0.1:9', '--port', '0'], {
        ...env,
        AIRLOCK_MIRROR_TOKEN: undefined,
        AIRLOCK_MIRROR_TOKEN_FILE: undefined,
      });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toMatch(/AIRLOCK_MIRROR_TOKEN/);
      const workers = await run(['serve', '--store', join(t.dir, 's'), '--follow', 'http://127.0.0.1:9', '--workers', '2', '--port', '0'], {
        AIRLOCK_MIRROR_TOKEN: 'svc_x',
      });
      expect(workers.code).toBe(2);
      expect(workers.stderr).toMatch(/--workers 1/);
      const pinned = await run(['serve', '--store', join(t.dir, 's'), '--follow', 'http://127.0.0.1:9', '--version', 'v1', '--port', '0'], {
        AIRLOCK_MIRROR_TOKEN: 'svc_x',
      });
      expect(pinned.code).toBe(2);
      const grace = await run(['serve', '--store', join(t.dir, 's'), '--skew-grace', 'soon', '--port', '0']);
      expect(grace.code).toBe(2);
      expect(grace.stderr).toMatch(/--skew-grace/);
    } finally {
      await t.cleanup();
    }
  });
});
