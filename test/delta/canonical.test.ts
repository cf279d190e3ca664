import { afterEach, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { list } from 'tar';
import { HashingOut, canonicalTarSize, writeCanonicalTar } from '../../src/delta/canonical.js';
import type { FileRecord } from '../../src/archive/index.js';

/**
 * The canonical bundle.tar of a site (src/delta/canonical.ts): read ahead, gathered writes,
 * and still every file checked.
 */
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const mtime = new Date('2026-01-01T00:00:00Z');

/** 40 small files, one of 3 MiB (streamed, not read whole) and an empty one, in byte order of paths. */
async function site(): Promise<{ siteDir: string; files: FileRecord[]; bodies: Map<string, Buffer> }> {
  dir = await mkdtemp(join(tmpdir(), 'airlock-canonical-'));
  const siteDir = join(dir, 'site');
  await mkdir(join(siteDir, 'docs'), { recursive: true });
  const bodies = new Map<string, Buffer>();
  for (let i = 0; i < 40; i++) bodies.set(`docs/p${String(i).padStart(2, '0')}.html`, Buffer.from(`<h1>page ${i}</h1>` + 'x'.repeat(i * 97)));
  bodies.set('empty.txt', Buffer.alloc(0));
  bodies.set('large.bin', randomBytes(3 * 1024 * 1024 + 5));
  const files: FileRecord[] = [];
  for (const path of [...bodies.keys()].sort()) {
    const body = bodies.get(path)!;
    await writeFile(join(siteDir, path), body);
    files.push({ path, size: body.length, sha256: sha(body) } as FileRecord);
  }
  return { siteDir, files, bodies };
}

async function writeTar(siteDir: string, files: FileRecord[]): Promise<Buffer> {
  const out = join(dir!, `out-${randomBytes(4).toString('hex')}.tar`);
  const fh = await open(out, 'wx');
  try {
    const w = new HashingOut(fh);
    await writeCanonicalTar(w, siteDir, files, mtime);
    await w.flush();
    expect(w.bytes).toBe(canonicalTarSize(files, mtime));
    const bytes = await readFile(out);
    expect(w.whole.digest('hex')).toBe(sha(bytes)); // what it hashed is what reached the file
    return bytes;
  } finally {
    await fh.close();
  }
}

describe('canonical bundle.tar', () => {
  it('holds every file in manifest order with its exact bytes, small files read ahead and big ones streamed', async () => {
    const { siteDir, files, bodies } = await site();
    const tarPath = join(dir!, 'check.tar');
    await writeFile(tarPath, await writeTar(siteDir, files));
    const seen: [string, Buffer][] = [];
    await list({
      file: tarPath,
      onReadEntry: (e) => {
        const parts: Buffer[] = [];
        e.on('data', (c: Buffer) => parts.push(c));
        e.on('end', () => seen.push([e.path, Buffer.concat(parts)]));
      },
    });
    expect(seen.map(([p]) => p)).toEqual(files.map((f) => f.path));
    for (const [p, body] of seen) expect(body.equals(bodies.get(p)!), p).toBe(true);
  });

  it('a file that grew after it was listed is refused, small (read whole) or big (streamed)', async () => {
    for (const path of ['docs/p03.html', 'large.bin']) {
      const { siteDir, files } = await site();
      await appendFile(join(siteDir, path), 'one more byte'.slice(0, 1));
      await expect(writeTar(siteDir, files), path).rejects.toMatchObject({ code: 'AIRLOCK_DIGEST_MISMATCH', details: { subject: path } });
      await rm(dir!, { recursive: true, force: true });
    }
  });

  it('a file changed in place (same size) or gone is refused, and a read ahead of its turn fails no other way', async () => {
    const { siteDir, files } = await site();
    await writeFile(join(siteDir, 'docs/p20.html'), Buffer.alloc(files.find((f) => f.path === 'docs/p20.html')!.size, 0x41));
    await expect(writeTar(siteDir, files)).rejects.toMatchObject({ code: 'AIRLOCK_DIGEST_MISMATCH', details: { subject: 'docs/p20.html' } });
    await rm(join(siteDir, 'docs/p05.html'));
    // p05 is read ahead while p00..p04 are written: its failure surfaces in order, as an error of p05.
    await expect(writeTar(siteDir, files)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('delta manifest words', () => {
  it('a delta manifest naming a key twice is refused with "an airlock-delta/1 manifest" (the article agrees)', async () => {
    const { parseDeltaEnvelope } = await import('../../src/delta/format.js');
    let message = '';
    try {
      parseDeltaEnvelope(Buffer.from('{"format":"airlock-delta/1","format":"x"}'));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('every key appears once in an airlock-delta/1 manifest');
  });
});
