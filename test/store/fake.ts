/** Fake committed versions (version.json + airlock.json only) for tests of list/activate/prune. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appendAudit } from '../../src/store/audit/append.js';

export async function fakeVersion(store: string, label: string, importedAt: string): Promise<void> {
  // As airlock does: the version's audit line first (a store with versions but no log has lost its log).
  await mkdir(store, { recursive: true });
  await appendAudit(store, { command: 'test', outcome: 'ok', detail: `hand-made version ${label}` });
  const dir = join(store, 'versions', label);
  await mkdir(join(dir, 'site'), { recursive: true });
  const sha = 'a'.repeat(64);
  await writeFile(
    join(dir, 'version.json'),
    JSON.stringify({
      label,
      domain: 'docs.example.com',
      importedAt,
      packageSha256: sha,
      archive: { name: 'bundle.tar.gz', format: 'tar.gz', offset: 1536, size: 10, sha256: sha },
      signer: null,
      pageCount: 1,
      fileCount: 1,
      totalBytes: 10,
    }),
  );
  await writeFile(
    join(dir, 'airlock.json'),
    JSON.stringify({
      format: 'airlock-package/1',
      domain: 'docs.example.com',
      version: label,
      jobId: null,
      createdAt: importedAt,
      pageCount: 1,
      archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: 10, sha256: sha },
      files: [{ path: 'index.html', size: 10, sha256: sha }],
    }),
  );
}
