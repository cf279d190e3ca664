/**
 * Throughput of the HTML transform (src/features) on a 15 KB docs page: the fixture home page
 * (GA + PostHog tags, search and assistant widgets) padded with Next.js-style inline RSC
 * payload scripts and prose. It runs once per version load, so pages/s bounds load time.
 * Usage: node --import tsx bench/html-transform.ts [pages=3000]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPagePolicy, resolveFeatures } from '../src/features/index.js';

const TARGET = 15 * 1024;
const pages = Number(process.argv[2] ?? 3000);
const base = readFileSync(fileURLToPath(new URL('../fixtures/site/index.html', import.meta.url)), 'utf8');

function page(i: number): Buffer {
  let extra = '';
  for (let k = 0; base.length + extra.length < TARGET; k++) {
    extra += `<p>Paragraph ${i}.${k}: the API streams the static export when the job completes, with exponential backoff.</p>\n`;
    if (k % 8 === 0) extra += `<script>self.__next_f.push([1,"${i}:${k}:T2a,page content chunk ${'x'.repeat(200)}"])</script>\n`;
  }
  return Buffer.from(base.replace('</main>', `${extra}</main>`), 'utf8');
}

const inputs = Array.from({ length: 50 }, (_, i) => page(i));
const size = inputs[0]!.length;
for (const [label, resolved] of [
  ['air-gapped', resolveFeatures()],
  ['cloud', resolveFeatures({ deployment: 'cloud' })],
] as const) {
  const policy = createPagePolicy(resolved);
  for (let i = 0; i < 200; i++) await policy.transform(inputs[i % inputs.length]!, `warm${i}.html`); // JIT + wasm warm-up
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < pages; i++) await policy.transform(inputs[i % inputs.length]!, `p${i}.html`);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  const rate = pages / s;
  // CPU time as well as wall time: on a shared machine the wall clock also counts waiting for a core.
  console.log(
    `${label.padEnd(10)} ${pages} pages of ${(size / 1024).toFixed(1)} KB in ${s.toFixed(2)} s (${cpu.toFixed(2)} s CPU): ` +
      `${rate.toFixed(0)} pages/s wall, ${(pages / cpu).toFixed(0)} pages/s CPU, ${((rate * size) / 1048576).toFixed(1)} MB/s; ` +
      `10,000 pages ≈ ${(10000 / rate).toFixed(1)} s wall`,
  );
}
