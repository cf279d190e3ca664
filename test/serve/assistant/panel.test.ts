import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFeatures } from '../../../src/features/index.js';
import { createAirlockServer, type AirlockServer } from '../../../src/serve/index.js';
import { featureOptions } from '../../../src/serve/features.js';
import { localAssistantFor } from '../../../src/assistant/route.js';
import { fixtureStore } from '../../relay/helpers.js';

/**
 * The assistant panel's files (`/_airlock/assistant.js` and its stylesheet) through the real chain:
 * import → serve air-gapped. Served and injected while local-assistant is on, gone (404, not in
 * the pages) while it is off. No model is asked here: nothing asks a question.
 */
let fx: Awaited<ReturnType<typeof fixtureStore>>;
const open: AirlockServer[] = [];

async function start(enable: string[]): Promise<string> {
  const log = () => {};
  const resolved = resolveFeatures({ deployment: 'air-gapped', enable });
  const assistant = localAssistantFor({ model: { url: 'http://127.0.0.1:9/v1', name: 'unused', key: null } });
  const srv = await createAirlockServer({ store: fx.store, lease: false, log, ...featureOptions(resolved, null, { log, assistant }) });
  open.push(srv);
  return (await srv.listen(0, '127.0.0.1')).replace(/\/$/, '');
}

beforeAll(async () => {
  fx = await fixtureStore();
});
afterAll(async () => {
  for (const s of open.splice(0)) await s.close(1000);
  await fx?.cleanup();
});

describe('the assistant panel of local-assistant', () => {
  it('on: its script is in the pages, after the search dialog, and its files are served with their types under the page CSP', async () => {
    const origin = await start(['local-assistant']);
    const page = await fetch(`${origin}/getting-started/`);
    const html = await page.text();
    expect(html).toMatch(/<script src="\/_airlock\/assistant\.js" defer data-airlock="local-assistant" data-widget="[^"]*#assistant-widget[^"]*"><\/script>/);
    expect(html.indexOf('/_airlock/search.js')).toBeLessThan(html.indexOf('/_airlock/assistant.js'));
    // same-origin files: the page's script-src and style-src 'self' allow them, nothing else is needed
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).toMatch(/connect-src 'self'(;|$)/);
    const js = await fetch(`${origin}/_airlock/assistant.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const code = await js.text();
    expect(() => new Function(code)).not.toThrow();
    expect(code).toContain("'/discovery/v2/assistant/'");
    expect(code).not.toMatch(/innerHTML|insertAdjacentHTML|document\.write/);
    const css = await fetch(`${origin}/_airlock/assistant.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('off: no panel in the pages, and its files answer 404', async () => {
    const origin = await start([]);
    expect(await (await fetch(`${origin}/getting-started/`)).text()).not.toContain('/_airlock/assistant.js');
    for (const p of ['/_airlock/assistant.js', '/_airlock/assistant.css']) {
      const r = await fetch(origin + p);
      expect(r.status, p).toBe(404);
      expect(await r.json()).toEqual({ error: 'local-assistant is turned off for this site' });
    }
  });
});
