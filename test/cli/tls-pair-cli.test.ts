/**
 * `serve --tls-cert F --tls-key F` with a pair that cannot serve, through the built binary: a key
 * of another type or of another certificate, a key given as the certificate, a certificate given
 * as the key, an empty, garbage or public-key file. Each is exit 2 AIRLOCK_TLS_FILE at start-up,
 * in words naming the file, never OpenSSL's own error text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';
import { makeCert } from '../helpers/tls.js';

let dir: string;
const f = (name: string) => join(dir, name);
const RAW = /error:[0-9A-F]{8}|routines::|\bE[A-Z]{3,}\b|Error:/;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-tls-pair-'));
  for (const name of ['tls', 'other']) makeCert(dir, name);
  execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', f('ed.key')], { stdio: 'ignore' });
  execFileSync('openssl', ['pkey', '-in', f('ed.key'), '-pubout', '-out', f('ed.pub')], { stdio: 'ignore' });
  await writeFile(f('empty'), '');
  await writeFile(f('garbage'), 'not PEM at all \x00\xff\n');
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function startRefused(cert: string, key: string, words: RegExp, named: string): Promise<void> {
  const r = await airlockAsync(['serve', '--store', f('store'), '--host', '127.0.0.1', '--port', '0', '--tls-cert', f(cert), '--tls-key', f(key)], {
    timeoutMs: 20_000,
  });
  const label = `${cert} + ${key}`;
  expect(r.signal, `${label}: still serving: ${r.stdout}`).toBeNull();
  expect(r.status, `${label}: ${r.stderr}`).toBe(2);
  expect(r.stderr, label).toMatch(/\[AIRLOCK_TLS_FILE\]\n?$/);
  expect(r.stderr, label).toMatch(words);
  expect(r.stderr, label).toContain(f(named));
  expect(r.stderr, label).not.toMatch(RAW);
}

describe('serve: a TLS pair that cannot serve is refused at start-up in words', () => {
  it('a key that does not belong to the certificate: of another type (Ed25519 for an EC certificate) or of another certificate', async () => {
    await startRefused('tls.crt', 'ed.key', /does not belong to certificate/, 'ed.key');
    await startRefused('tls.crt', 'other.key', /does not belong to certificate/, 'other.key');
  }, 60_000);

  it('a file that is not a certificate given as the certificate', async () => {
    for (const cert of ['tls.key', 'empty', 'garbage', 'ed.pub']) await startRefused(cert, 'tls.key', /is not a PEM certificate/, cert);
  }, 90_000);

  it('a file that holds no private key given as the key', async () => {
    for (const key of ['tls.crt', 'empty', 'garbage', 'ed.pub']) await startRefused('tls.crt', key, /is not a PEM private key/, key);
  }, 90_000);
});
