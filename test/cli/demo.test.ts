import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { startAirlock } from '../helpers/bin.js';

/** Run `airlock demo` until it prints its URL (bounded), hand the URL to `use`, then SIGTERM it. */
async function withDemo(use: (url: string) => Promise<void>): Promise<{ code: number | null; stderr: string }> {
  const child = startAirlock(['demo']);
  try {
    const url = (await child.waitFor(/^(http:\/\/127\.0\.0\.1:\d+\/)$/m, 45_000))[1]!;
    await use(url);
  } finally {
    child.kill('SIGTERM');
  }
  return { code: (await child.exit(60_000)).code, stderr: child.stderr() };
}

describe('airlock demo', () => {
  it('runs emulate → fetch → import → serve and serves the fixture site air-gapped, then cleans up on SIGTERM', async () => {
    let version = '';
    const { code, stderr } = await withDemo(async (url) => {
      const home = await fetch(url);
      expect(home.status).toBe(200);
      version = home.headers.get('x-airlock-version') ?? '';
      expect(version).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
      const html = await home.text();
      expect(html).toContain('window.__AIRLOCK_FEATURES__');
      expect(html).not.toContain('googletagmanager.com');
      const features = await (await fetch(new URL('_airlock/features', url))).json();
      expect(features).toEqual({
        deployment: 'air-gapped',
        features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: true, localAssistant: false },
      });
      const health = await (await fetch(new URL('_airlock/health', url))).json();
      expect(health).toEqual({ status: 'ok', version });
    });
    expect(code).toBe(0);
    expect(stderr).toContain('signed');
    expect(stderr).not.toMatch(/svc_(?!\[REDACTED\])[A-Za-z0-9]/);
    const dir = /into (\/\S+)\/store/.exec(stderr)?.[1];
    expect(dir).toBeTruthy();
    expect(existsSync(dir!)).toBe(false);
  });
});
