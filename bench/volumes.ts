/**
 * `npm run bench:volumes` (volumes): what reading a package from its volumes costs, beside the
 * same package as one file (the peer), in the same run. A generated export (plain tar of
 * incompressible files, so neither compression nor sparse files flatter either side) is packed,
 * signed, and split into three volumes; then `verify` and `import` (into a fresh store) run on
 * the single file and on the volumes, alternately, and the medians are compared.
 *   node --import tsx bench/volumes.ts [--mib 256] [--runs 3] [--dir DIR]
 * The volume path reads every volume once more than the single file (the signed table's sha256
 * check, before anything is used), so expect up to ~1.5–2× for verify and less for import.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as tar from 'tar';
import { packArchive, verifyPackage } from '../src/package/index.js';
import { openVolumes, splitPackage } from '../src/package/volumes/index.js';
import { importPackage, importVolumes } from '../src/store/index.js';
import { remove, settle } from './settle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { mib: { type: 'string', default: '256' }, runs: { type: 'string', default: '3' }, dir: { type: 'string' } } });
const MiB = 1024 * 1024;
const bytes = Number(values.mib) * MiB;
const runs = Number(values.runs);
const work = resolve(values.dir ?? join(ROOT, 'bench/out/volumes'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const time = async (f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

await remove(work);
const site = join(work, 'site');
await mkdir(join(site, 'files'), { recursive: true });
await writeFile(join(site, 'index.html'), '<!doctype html><title>bench</title>');
const names = ['index.html'];
for (let i = 0, left = bytes; left > 0; i++, left -= 16 * MiB) {
  await writeFile(join(site, 'files', `f${i}.bin`), randomBytes(Math.min(16 * MiB, left)));
  names.push(`files/f${i}.bin`);
}
await tar.create({ file: join(work, 'export.tar'), cwd: site, portable: true }, names);
await remove(site);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const single = (
  await packArchive({ archivePath: join(work, 'export.tar'), domain: 'bench.example.com', version: 'v1', outDir: join(work, 'one'), signKey: privateKey })
).package;
await rm(join(work, 'export.tar'));
await mkdir(join(work, 'vols'));
const copy = join(work, 'vols', 'bench.example.com-v1.airlock');
await copyFile(single, copy);
const split = Math.ceil(bytes / 2.5);
const vols = (await splitPackage(copy, { split, signKey: privateKey })).volumes;
await rm(copy);
console.log(
  `package ${(bytes / MiB).toFixed(0)} MiB of incompressible files; ${vols.length} volumes of ≤ ${(split / MiB).toFixed(0)} MiB; ${runs} runs each, alternating`,
);

const t = { verifyOne: [] as number[], verifyVols: [] as number[], importOne: [] as number[], importVols: [] as number[] };
const trust = [publicKey];
// Every run's store stays until the end: nothing is deleted between timed runs (bench/settle.ts).
await settle();
for (let r = 0; r < runs; r++) {
  t.verifyOne.push(await time(() => verifyPackage(single, { trust })));
  t.verifyVols.push(await time(async () => verifyPackage((await openVolumes([vols[0]!], { trust })).input, { trust })));
  for (const [k, f] of [
    ['importOne', (s: string) => importPackage(single, { store: s, trust })],
    ['importVols', (s: string) => importVolumes([vols[0]!], { store: s, trust })],
  ] as const) {
    const store = join(work, `store-${k}-${r}`);
    t[k].push(await time(() => f(store)));
  }
}
const row = (what: string, one: number[], v: number[]) =>
  console.log(
    `${what.padEnd(7)} one file ${median(one).toFixed(0).padStart(6)} ms   volumes ${median(v).toFixed(0).padStart(6)} ms   ratio ${(median(v) / median(one)).toFixed(2)}×`,
  );
row('verify', t.verifyOne, t.verifyVols);
row('import', t.importOne, t.importVols);
await remove(work);
