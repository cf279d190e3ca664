import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { serializeManifest, type Manifest } from '../../src/package/manifest.js';
import { digestTemplate, fillDigests, finishTarget, type DeltaLayout, type ResolvedTarget } from '../../src/delta/index.js';
import { parseManifest } from '../../src/package/manifest.js';
import { ZERO_DIGEST } from '../../src/delta/template.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const files = [
  { path: 'a.html', size: 1, sha256: sha('a') },
  { path: 'b.html', size: 1, sha256: sha('a') }, // same content twice: same digest, still one per file
  { path: 'c.css', size: 1, sha256: sha('c') },
];
const manifest = {
  format: 'airlock-package/1',
  domain: 'docs.example.com',
  version: 'v1',
  jobId: null,
  createdAt: '2026-01-01T00:00:00Z',
  archive: { name: 'bundle.tar', format: 'tar', size: 10240, sha256: sha('archive') },
  pageCount: 2,
  files,
} as unknown as Manifest;
const bytes = serializeManifest(manifest);

describe('digest templates (delta target manifests)', () => {
  it('zeroes every file digest in order, keeps the archive digest, and fills back to the exact bytes', () => {
    const t = digestTemplate(bytes, files)!;
    expect(t).not.toBeNull();
    const text = t.toString();
    expect(text.split(ZERO_DIGEST).length - 1).toBe(3);
    expect(text).toContain(sha('archive'));
    expect(text).not.toContain(sha('c'));
    expect(
      fillDigests(
        t,
        files.map((f) => f.sha256),
      )!.equals(bytes),
    ).toBe(true);
  });

  it('no template when a file digest is not where the file list says (out of order or absent)', () => {
    expect(digestTemplate(bytes, [...files].reverse())).toBeNull();
    expect(digestTemplate(bytes, [...files, { sha256: sha('z') }])).toBeNull();
  });

  it('filling with the wrong number of digests gives nothing; a wrong digest gives other bytes (caught by the signed digest)', () => {
    const t = digestTemplate(bytes, files)!;
    expect(
      fillDigests(
        t,
        files.slice(1).map((f) => f.sha256),
      ),
    ).toBeNull();
    const wrong = fillDigests(t, [sha('x'), sha('a'), sha('c')])!;
    expect(sha(wrong.toString())).not.toBe(sha(bytes.toString()));
  });

  it('a filled template is taken as the manifest only when every file got its own digest: a fill that lands in another field is refused', () => {
    const digests = new Map(files.map((f) => [f.path, f.sha256]));
    const layoutFor = (filled: Buffer) => ({ manifest: { target: { manifestSha256: sha(filled.toString()) }, ops: [] } }) as unknown as DeltaLayout;
    const resolved = (t: Buffer): ResolvedTarget => ({
      manifest: parseManifest(t, 'the target manifest'),
      manifestBytes: t,
      signature: null,
      signatures: [],
      template: true,
    });
    // The honest template: the filled manifest is exactly the target's, field for field.
    const t = digestTemplate(bytes, files)!;
    const done = finishTarget(layoutFor(bytes), resolved(t), digests);
    expect(done.manifestBytes.equals(bytes)).toBe(true);
    expect(done.manifest).toEqual(parseManifest(bytes));
    // b.html's key spelled with a JSON escape (the text search cannot see it) and a zeroed digest in
    // an extra field instead: the counts agree, so the fill goes into the extra field and b.html
    // would keep a zero digest its file does not have.
    const text = t
      .toString()
      .replace(/("path": "b\.html",\s*"size": 1,\s*)"sha256"/, '$1"sha\\u003256"')
      .replace('"pageCount": 2,', `"pageCount": 2, "x": { "sha256": "${ZERO_DIGEST}" },`);
    const crafted = Buffer.from(text);
    expect(crafted.toString()).toContain('sha\\u003256');
    const filled = fillDigests(
      crafted,
      files.map((f) => f.sha256),
    )!;
    expect(filled).not.toBeNull();
    expect(() => finishTarget(layoutFor(filled), resolved(crafted), digests)).toThrow(/does not hold one zeroed digest per file, in file order/);
  });
});
