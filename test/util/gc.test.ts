import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const GC = fileURLToPath(new URL('../../src/util/gc.ts', import.meta.url));

/**
 * A server holds one of Node's tick entries so that V8 keeps their shape: without it, a full
 * collection in a quiet moment gives the next entries a new shape, and after a few the code that
 * builds them (in every HTTP write) takes V8's slow generic path for good. V8's own view of the
 * shape (%HaveSameMap) is only open to a process started with --allow-natives-syntax: a child.
 */
describe('holdTickShape', () => {
  it('after full collections with no tick queued, a new tick entry has the shape of the one held', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-gc-'));
    try {
      const probe = join(dir, 'probe.mjs');
      writeFileSync(
        probe,
        `import { createHook } from 'node:async_hooks';
const { holdTickShape } = await import(${JSON.stringify(GC)});
const held = holdTickShape();
if (held === undefined || holdTickShape() !== held) throw new Error('no tick entry held, or another one at a second call');
const pause = () => new Promise((r) => setTimeout(r, 5));
await pause();
for (let i = 0; i < 3; i++) { globalThis.gc(); await pause(); }
let fresh;
const hook = createHook({ init(_id, type, _trigger, resource) { if (type === 'TickObject') fresh ??= resource; } }).enable();
process.nextTick(() => {});
hook.disable();
process.stdout.write(String(%HaveSameMap(held, fresh)));
`,
      );
      const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', probe], { encoding: 'utf8', timeout: 30_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
