import { createHash, randomFillSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GenerateOptions } from '../fixtures/generate.js';

/**
 * A real-export-shaped site (real-export performance): generateSite with these options (1,000 pages + 1,000
 * redirect stubs + third-party markup + a few multi-MB pages = ~2,000 HTML files), then
 * padRealExport beside them: 4,000 files in all.
 */
export const REAL_EXPORT: GenerateOptions = {
  pages: 1000,
  bytesPerPage: 30_000,
  traits: { redirectStubs: 1000, thirdParty: true, largePages: { count: 3, bytes: 2_000_000 } },
};

/** Real exports beside their pages: 1,400 content-hashed JS/CSS chunks, 580 small images, 20 photos of 4 MB. */
export async function padRealExport(site: string): Promise<void> {
  const chunks = join(site, '_next/static/chunks');
  const media = join(site, 'assets/images');
  await mkdir(chunks, { recursive: true });
  await mkdir(media, { recursive: true });
  const words = 'function return const let var this props state render module exports require default import export async await'.split(' ');
  for (let i = 0; i < 1400; i++) {
    const n = 2000 + ((i * 7919) % 40_000);
    let body = '';
    for (let k = 0; body.length < n; k++) body += `${words[(i + k * 31) % words.length]} a${(k * i) % 997}=${k};`;
    const name = createHash('sha256').update(body).digest('hex').slice(0, 16);
    await writeFile(join(chunks, `${i % 5 === 0 ? name + '.css' : name + '.js'}`), body);
  }
  for (let i = 0; i < 580; i++) await writeFile(join(media, `fig-${i}.png`), randomFillSync(Buffer.alloc(4000 + (i % 13) * 3000)));
  for (let i = 0; i < 20; i++) await writeFile(join(media, `photo-${i}.jpg`), randomFillSync(Buffer.alloc(4 << 20)));
}
