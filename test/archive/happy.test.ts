import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { create as tarCreate } from 'tar';
import yazl from 'yazl';
import { extractArchive, readArchive, scanArchive, wrappingFolder } from '../../src/archive/index.js';
import { siteFiles, tar, tgz, zip } from '../helpers/evil-archives.js';
import { sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const expected = (prefix = '') =>
  siteFiles(prefix)
    .map((f) => ({ path: f.name.slice(prefix.length), size: Buffer.byteLength(f.data), sha256: sha(f.data) }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));

async function tree(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) out.push(...(await tree(dir, p)));
    else out.push(p);
  }
  return out.sort();
}

describe('happy paths', () => {
  for (const [fmt, build] of [
    ['tar', tar],
    ['tar.gz', tgz],
    ['zip', zip],
  ] as const) {
    it(`${fmt}: wrapping folder "site/" is stripped; scan and extract agree; files land at their stripped paths`, async () => {
      const bytes = build([{ name: 'site/', type: '5' }, { name: 'site/guide/', type: '5' }, ...siteFiles('site/')]);
      const path = await sb.put(`a.${fmt}`, bytes);
      const scan = await scanArchive({ path });
      expect(scan).toEqual({ format: fmt, archiveSha256: sha(bytes), archiveSize: bytes.length, files: expected('site/'), strip: 'site/' });
      expect(await extractArchive({ path }, sb.dest)).toEqual(scan);
      expect(await tree(sb.dest)).toEqual(
        expected()
          .map((f) => f.path)
          .sort(),
      );
      for (const f of siteFiles()) expect(await readFile(join(sb.dest, f.name), 'utf8')).toBe(f.data);
    });

    it(`${fmt}: a digest the caller already took of these bytes is kept, not taken again; every entry is still hashed`, async () => {
      const bytes = build(siteFiles('site/'));
      const path = await sb.put(`k.${fmt}`, bytes);
      const known = 'a'.repeat(64); // not the bytes' digest: proves the archive was not hashed again
      const r = await extractArchive({ path }, sb.dest, { archiveSha256: known });
      expect(r.archiveSha256).toBe(known);
      expect(r.files).toEqual(expected('site/'));
    });

    it(`${fmt}: no wrapping folder; nested folders are created`, async () => {
      const files = [...siteFiles(), { name: 'a/b/c/d/deep.html', data: 'deep' }];
      const path = await sb.put(`b.${fmt}`, build(files));
      const r = await extractArchive({ path }, sb.dest);
      expect(r.strip).toBe('');
      expect(await readFile(join(sb.dest, 'a/b/c/d/deep.html'), 'utf8')).toBe('deep');
    });

    it(`${fmt}: ByteSource with offset/length reads an archive in place inside a bigger file`, async () => {
      const inner = build(siteFiles('site/'));
      const head = randomBytes(777);
      const path = await sb.put('pkg.bin', Buffer.concat([head, inner, randomBytes(333)]));
      const r = await extractArchive({ path, offset: head.length, length: inner.length }, sb.dest);
      expect(r.archiveSha256).toBe(sha(inner));
      expect(r.archiveSize).toBe(inner.length);
      expect(r.files).toEqual(expected('site/'));
    });
  }

  it('a range that runs past the end of the file is refused as truncated', async () => {
    const path = await sb.put('short', tar(siteFiles()));
    await expect(scanArchive({ path, offset: 10, length: 1_000_000 })).rejects.toMatchObject({ code: 'AIRLOCK_TRUNCATED', exitCode: 4 });
  });

  it('readArchive yields each file once with a readable stream and normalised path', async () => {
    const path = await sb.put('r.tar', tar([{ name: './', type: '5' }, ...siteFiles('./site/')]));
    const seen: [string, string][] = [];
    for await (const e of readArchive({ path })) {
      const chunks: Buffer[] = [];
      for await (const c of e.stream) chunks.push(c as Buffer);
      seen.push([e.path, Buffer.concat(chunks).toString()]);
    }
    expect(seen).toEqual(siteFiles('site/').map((f) => [f.name, f.data]));
  });

  it('archives written by real tools: node-tar (gzip, "./" prefixes) and yazl zip64', async () => {
    const src = join(sb.root, 'src');
    for (const f of siteFiles()) {
      await mkdir(join(src, f.name, '..'), { recursive: true });
      await writeFile(join(src, f.name), f.data);
    }
    const tgzPath = join(sb.root, 'real.tgz');
    await tarCreate({ gzip: true, file: tgzPath, cwd: src }, ['.']);
    expect((await scanArchive({ path: tgzPath })).files).toEqual(expected());
    const z = new yazl.ZipFile();
    for (const f of siteFiles('site/')) z.addBuffer(Buffer.from(f.data), f.name, { forceZip64Format: true });
    z.end({ forceZip64Format: true, comment: '' });
    const zipPath = join(sb.root, 'real.zip');
    const out = z.outputStream.pipe(createWriteStream(zipPath));
    await once(out, 'finish');
    const r = await extractArchive({ path: zipPath }, sb.dest);
    expect(r.files).toEqual(expected('site/'));
  });

  it('extraction into a non-empty folder is refused', async () => {
    await mkdir(sb.dest, { recursive: true });
    await writeFile(join(sb.dest, 'x'), 'x');
    await expect(extractArchive({ path: await sb.put('a.tar', tar(siteFiles())) }, sb.dest)).rejects.toMatchObject({ code: 'AIRLOCK_DEST_NOT_EMPTY' });
  });

  it('wrapping folder with a child of the same name (site/site/x) unwraps correctly', async () => {
    const path = await sb.put('w.tar', tar([...siteFiles('site/'), { name: 'site/site/x.html', data: 'x' }]));
    await extractArchive({ path }, sb.dest);
    expect(await readFile(join(sb.dest, 'site/x.html'), 'utf8')).toBe('x');
  });
});

describe('wrappingFolder', () => {
  it('strips only a single first segment shared by every file', () => {
    expect(wrappingFolder(['site/index.html', 'site/a/b.html'])).toBe('site/');
    expect(wrappingFolder(['index.html', 'site/a.html'])).toBe('');
    expect(wrappingFolder(['a/index.html', 'b/index.html'])).toBe('');
    expect(wrappingFolder(['site/index.html'])).toBe('site/');
    expect(wrappingFolder([])).toBe('');
  });
});
