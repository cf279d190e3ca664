/**
 * `npm run bench:audit-log`: what a long audit log costs an import. Builds a store with one
 * version and a chained log of --lines lines (default 20,000, ~9 MB), then times one full chain
 * scan (verifyAudit) and `airlock import` of a second version, medians of 5 (a fresh copy of the
 * store each time). An import of a store with no trust policy scans the chain 4 times: before the
 * lock (loadPolicyChain's history check, from admitPackage), then under it (auditWritable, the
 * history check again, the append's own check).
 *   node --import tsx bench/audit-log.ts [--lines 20000] [--bin dist/src/cli/bin.js]
 * Measured (2-core machine shared with other jobs, two runs): 20,001 lines (9.0 MB), one scan
 * 112 / 183 ms (median); import 2.2 / 2.3 s (median, 1.5-2.8). Four read opens of audit.log per
 * import (strace): the scans are ~0.45-0.7 s of it; reading the chain once under the lock would
 * save two of them, ~0.2-0.4 s.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { writeFile, appendFile, readFile, rm, cp } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildPackage, makeKey, makeTempDir, sampleSite } from '../test/store/helpers.js';
import { importPackage } from '../src/store/index.js';
import { verifyAudit } from '../src/store/audit.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '20000' }, bin: { type: 'string', default: 'dist/src/cli/bin.js' } } });
const dir = await makeTempDir('audit-bench-');
const key = await makeKey(dir);
const base = join(dir, 'base');
await importPackage(await buildPackage(dir, { version: 'v1', files: sampleSite('v1'), key }), { store: base, trust: [key.pub] });
const head = JSON.parse(await readFile(join(base, 'audit.head'), 'utf8'));
let { count, hash, size } = head;
const chunks: string[] = [];
for (let i = 0; i < Number(values.lines); i++) {
  const line = {
    n: count + 1,
    time: new Date().toISOString(),
    user: 'bench',
    command: 'activate',
    outcome: 'activated',
    reason: null,
    package: null,
    packageSha256: null,
    domain: 'docs.example.com',
    version: 'v1',
    signers: [],
    detail: 'x'.repeat(150),
    prevHash: hash,
  };
  const text = JSON.stringify(line);
  chunks.push(text + '\n');
  count++;
  hash = createHash('sha256').update(text).digest('hex');
  size += Buffer.byteLength(text) + 1;
}
await appendFile(join(base, 'audit.log'), chunks.join(''));
await writeFile(join(base, 'audit.head'), JSON.stringify({ count, hash, size }) + '\n');
const r0 = await verifyAudit(base);
console.log('lines', r0.lines, 'ok', r0.ok, 'bytes', size);
const scans: number[] = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  await verifyAudit(base);
  scans.push(performance.now() - t);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('one scan median ms', med(scans).toFixed(0));
const bin = values.bin;
const imps: number[] = [];
const pkg = await buildPackage(dir, { version: 'v2', files: sampleSite('v2'), key });
for (let i = 0; i < 5; i++) {
  const s = join(dir, `s${i}`);
  await cp(base, s, { recursive: true });
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, 'import', pkg, '--store', s, '--trust', key.pubPath], { encoding: 'utf8' });
  imps.push(performance.now() - t);
  if (r.status !== 0) console.log(r.stderr);
}
console.log('import median ms', med(imps).toFixed(0), imps.map((x) => x.toFixed(0)).join(' '));
await rm(dir, { recursive: true, force: true });
