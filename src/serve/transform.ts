import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants } from 'node:zlib';
import type { VersionSource } from './source.js';
import type { Replacement, TransformHtml } from './version-index.js';

const br = promisify(brotliCompress);
const gz = promisify(gzip);
const CONCURRENCY = 8;

/**
 * Apply the HTML hook of src/features once per version at load time (never per request): every
 * `.html` file is read, transformed, and given its own digest (so its ETag differs from the
 * untransformed page) and its own br/gzip variants, compressed here in the libuv pool. These
 * bodies stay in memory for the version's life: HTML is a small part of an export.
 */
export interface Transformed { replacements: Map<string, Replacement>; scriptHashes: string[]; styleHashes: string[] }

export async function transformHtmlFiles(src: VersionSource, hook: TransformHtml): Promise<Transformed> {
  const out = new Map<string, Replacement>();
  const scripts = new Set<string>();
  const styles = new Set<string>();
  const html = src.files.filter((f) => f.path.endsWith('.html'));
  let next = 0;
  const worker = async () => {
    while (next < html.length) {
      const f = html[next++]!;
      const result = await hook(await readFile(join(src.siteDir, f.path)), f.path);
      const identity = Buffer.isBuffer(result) ? result : result.html;
      if (!Buffer.isBuffer(result)) {
        for (const h of result.scriptHashes ?? []) scripts.add(h);
        for (const h of result.styleHashes ?? []) styles.add(h);
      }
      const sha256 = createHash('sha256').update(identity).digest('hex');
      const [b, g] = await Promise.all([
        br(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
        gz(identity, { level: 6 }),
      ]);
      const r: Replacement = { identity, sha256 };
      if (b.length < identity.length) r.br = b;
      if (g.length < identity.length) r.gzip = g;
      out.set(f.path, r);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { replacements: out, scriptHashes: [...scripts].sort(), styleHashes: [...styles].sort() };
}
