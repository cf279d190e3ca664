import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A tiny docs site for emulator tests: three pages with known words, one asset. */
export function tinySite(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-tinysite-'));
  mkdirSync(join(dir, 'guide'));
  mkdirSync(join(dir, '_next', 'static'), { recursive: true });
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title><script>var token="zzz"</script></head><body><main>${body}</main></body></html>`;
  writeFileSync(join(dir, 'index.html'), page('Home', '<h1>Welcome</h1><p>This site documents the Gizmo toolkit.</p>'));
  writeFileSync(
    join(dir, 'guide', 'install.html'),
    page('Installing Gizmo', '<p>To install Gizmo run <code>npm install gizmo</code>, then set the gizmo &amp; widget options.</p>'),
  );
  writeFileSync(join(dir, 'guide', 'tokens.html'), page('API tokens', '<p>Rotate tokens every ninety days. Tokens are secret.</p>'));
  writeFileSync(join(dir, '_next', 'static', 'app.js'), 'console.log("app")\n');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const FAST = { queuedMs: 40, runningMs: 160 };
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
