import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { startAirlock } from '../helpers/bin.js';

/** Run `airlock demo` until it prints its URL (bounded), hand the URL (and a wait on its stderr) to `use`, then SIGTERM it. */
async function withDemo(use: (url: string, said: (re: RegExp) => Promise<RegExpExecArray>) => Promise<void>): Promise<{ code: number | null; stderr: string }> {
  const child = startAirlock(['demo']);
  try {
    const url = (await child.waitFor(/^(http:\/\/127\.0\.0\.1:\d+\/)$/m, 45_000))[1]!;
    await use(url, (re) => child.waitFor(re, 30_000, 'stderr'));
  } finally {
    child.kill('SIGTERM');
  }
  return { code: (await child.exit(60_000)).code, stderr: child.stderr() };
}

describe('airlock demo', () => {
  it('runs emulate → fetch → import → serve and serves the fixture site air-gapped with its assistant answered by local-assistant, then cleans up on SIGTERM', async () => {
    let version = '';
    const { code, stderr } = await withDemo(async (url, said) => {
      const home = await fetch(url);
      expect(home.status).toBe(200);
      version = home.headers.get('x-airlock-version') ?? '';
      expect(version).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
      const html = await home.text();
      expect(html).toContain('window.__AIRLOCK_FEATURES__');
      expect(html).not.toContain('googletagmanager.com');
      // local-assistant: the export's assistant widget is kept, answered on this origin.
      expect(html).toContain('id="assistant-widget"');
      const features = await (await fetch(new URL('_airlock/features', url))).json();
      expect(features).toEqual({
        deployment: 'air-gapped',
        features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: true, localAssistant: true },
      });
      const health = await (await fetch(new URL('_airlock/health', url))).json();
      expect(health).toEqual({ status: 'ok', version });
      // The demo asks its assistant one question (the stand-in model answers from the quoted
      // sections) and prints the answer's first line, its sources and the commands to try.
      const answer = (await said(/^airlock demo: answer: +(.*)$/m))[1]!;
      expect(answer).toMatch(/^According to \[1\] .*[Aa]ccess tokens/);
      const sources = (await said(/^airlock demo: sources: +(.*)$/m))[1]!.split(', ');
      expect(sources[0]).toBe('/api-reference/manage-access-tokens');
      // The command it prints to ask again works as printed (its endpoint and body).
      const [, endpoint, body] = (await said(/^airlock demo: try: +curl -sN (\S+) -H 'content-type: application\/json' -d '(.*)'$/m))!;
      expect(endpoint).toBe(new URL('discovery/v2/assistant/docs.example.com/message', url).href);
      const again = await fetch(endpoint!, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(again.status).toBe(200);
      expect(await again.text()).toContain('"type":"source-url"');
      expect((await said(/^airlock demo: or: +(.*)$/m))[1]).toMatch(
        /^airlock serve --store \S+ --port 0 --assistant-model http:\/\/127\.0\.0\.1:\d+\/v1 --assistant-model-name stand-in/,
      );
    });
    expect(code).toBe(0);
    expect(stderr).toContain('signed');
    expect(stderr).not.toMatch(/svc_(?!\[REDACTED\])[A-Za-z0-9]/);
    const dir = /into (\/\S+)\/store/.exec(stderr)?.[1];
    expect(dir).toBeTruthy();
    expect(existsSync(dir!)).toBe(false);
  });
});
