import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assistantBody, fixtureStore, postJson } from './helpers.js';
import { startAirlock, stopAll, type Proc } from '../helpers/bin.js';

/** `airlock serve` relaying to `airlock emulate`, both the compiled binaries (run `npm run build` first). */
let fx: Awaited<ReturnType<typeof fixtureStore>>;

beforeAll(async () => {
  fx = await fixtureStore();
});
afterEach(() => stopAll());
afterAll(async () => {
  await fx?.cleanup();
});

/** The binary with no relay settings from the caller's environment. */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  return startAirlock(args, { env: { AIRLOCK_API_URL: '', AIRLOCK_ASSISTANT_KEY: '', ...env } });
}

describe('airlock serve relaying to airlock emulate (binaries)', () => {
  it('streams the assistant answer end to end; the page points at its own origin and the CSP stays self', async () => {
    const emu = run(['emulate', '--port', '0']);
    const url = (await emu.waitFor(/listening on (http:\/\/\S+)/, 15_000))[1]!;
    const keyFile = (await emu.waitFor(/assistant key file: +(\S+)/, 15_000))[1]!;
    const key = (await readFile(keyFile, 'utf8')).trim();
    const srv = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'client-hosted', '--enable', 'assistant', '--assistant-url', url], {
      AIRLOCK_ASSISTANT_KEY: key,
    });
    const origin = (await srv.waitFor(/^(http:\/\/\S+?)\/?\n/m, 15_000))[1]!;

    const res = await postJson(`${origin}/discovery/v2/assistant/docs.example.com/message`, assistantBody());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text().catch((e: unknown) => {
      throw new Error(`stream broke (${String(e)}); serve stderr: ${srv.stderr()}; emulate stderr: ${emu.stderr()}`);
    });
    expect(text).toContain('"type":"text-delta"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);

    const page = await fetch(`${origin}/`);
    const html = await page.text();
    expect(html).toMatch(/<meta name="docs-api-base" content="\/">/);
    const connect = /connect-src ([^;]*)/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    expect(connect).toBe("'self'");
    expect(srv.stdout() + srv.stderr()).not.toContain(key);
  });

  it('a wrong key type exits 5 before listening and never prints the key', async () => {
    const admin = 'svc_admin0123456789abcdef';
    const p = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'cloud', '--assistant-url', 'http://127.0.0.1:9'], {
      AIRLOCK_ASSISTANT_KEY: admin,
    });
    expect((await p.exit()).code).toBe(5);
    expect(p.stderr()).toMatch(/assistant key/);
    expect(p.stdout() + p.stderr()).not.toContain(admin);
  });

  it('no key exits 5 naming AIRLOCK_ASSISTANT_KEY; no upstream URL exits 2', async () => {
    const noKey = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'cloud', '--assistant-url', 'http://127.0.0.1:9']);
    expect((await noKey.exit()).code).toBe(5);
    expect(noKey.stderr()).toContain('AIRLOCK_ASSISTANT_KEY');
    const noUrl = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'client-hosted', '--enable', 'search'], {
      AIRLOCK_ASSISTANT_KEY: 'svc_dsc_abc123',
    });
    expect((await noUrl.exit()).code).toBe(2);
    expect(noUrl.stderr()).toContain('--assistant-url');
  });

  it('--help documents the relay flags', async () => {
    const p = run(['serve', '--help']);
    expect((await p.exit()).code).toBe(0);
    for (const f of ['--assistant-url', '--rate-limit-org-hour', '--rate-limit-ip-day', 'AIRLOCK_ASSISTANT_KEY']) expect(p.stdout() + p.stderr()).toContain(f);
  });
});
