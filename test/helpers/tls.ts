import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A self-signed P-256 certificate for 127.0.0.1 (CN `name`, valid two days) and its key, made by
 * openssl in `dir` as `<name>.crt` and `keyFile`.
 */
export function makeCert(dir: string, name: string, keyFile = `${name}.key`): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, keyFile);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}
