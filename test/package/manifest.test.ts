import { describe, expect, it } from 'vitest';
import { ManifestSchema, parseManifest, serializeManifest, type Manifest } from '../../src/package/manifest.js';

const good = (): Manifest => ({
  format: 'airlock-package/1',
  domain: 'docs.example.com',
  version: 'v1.2_rc-3',
  jobId: 'job_1',
  createdAt: '2025-01-15T12:00:00.000Z',
  pageCount: 16,
  archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: 10, sha256: 'a'.repeat(64) },
  files: [{ path: 'index.html', size: 3, sha256: 'b'.repeat(64) }],
});

describe('ManifestSchema', () => {
  it('accepts a contract manifest and keeps unknown fields (passthrough)', () => {
    const m = { ...good(), futureField: { x: 1 } };
    const parsed = parseManifest(Buffer.from(JSON.stringify(m)));
    expect(parsed).toEqual(m);
    expect(parseManifest(serializeManifest(good()))).toEqual(good());
  });

  it.each([
    [
      'format',
      (m: Record<string, unknown>) => {
        m.format = 'airlock-package/2';
      },
    ],
    [
      'version',
      (m: Record<string, unknown>) => {
        m.version = '-starts-with-dash';
      },
    ],
    [
      'version',
      (m: Record<string, unknown>) => {
        delete m.version;
      },
    ],
    [
      'createdAt',
      (m: Record<string, unknown>) => {
        m.createdAt = 'yesterday';
      },
    ],
    [
      'archive.sha256',
      (m: Record<string, unknown>) => {
        (m.archive as Record<string, unknown>).sha256 = 'A'.repeat(64);
      },
    ],
    [
      'archive.name',
      (m: Record<string, unknown>) => {
        (m.archive as Record<string, unknown>).name = '../bundle.tar.gz';
      },
    ],
    [
      'archive.name',
      (m: Record<string, unknown>) => {
        (m.archive as Record<string, unknown>).format = 'zip';
      },
    ],
    [
      'files.0.sha256',
      (m: Record<string, unknown>) => {
        (m.files as Record<string, unknown>[])[0]!.sha256 = 'zz';
      },
    ],
    [
      'files.0.size',
      (m: Record<string, unknown>) => {
        (m.files as Record<string, unknown>[])[0]!.size = -1;
      },
    ],
    [
      'jobId',
      (m: Record<string, unknown>) => {
        delete m.jobId;
      },
    ],
  ])('refuses a manifest with a bad %s, naming it', (field, edit) => {
    const m = good() as unknown as Record<string, unknown>;
    edit(m);
    expect(ManifestSchema.safeParse(m).success).toBe(false);
    expect(() => parseManifest(Buffer.from(JSON.stringify(m)))).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_BAD_MANIFEST', exitCode: 4, message: expect.stringContaining(field) }),
    );
  });

  it('refuses bytes that are not UTF-8 text, in words', () => {
    expect(() => parseManifest(Buffer.from('{"format": '))).toThrow(expect.objectContaining({ code: 'AIRLOCK_BAD_MANIFEST', exitCode: 4 }));
    expect(() => parseManifest(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(/is not UTF-8 text/);
  });
});
