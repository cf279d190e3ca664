import { statSync, watch, type FSWatcher } from 'node:fs';
import { createSecureServer, type ServerHttp2Session, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';
import { finish, requestsInProgress } from '../util/http-listen.js';

/**
 * `serve --tls-cert F --tls-key F`: HTTP/2 with HTTP/1.1 fallback chosen by ALPN (node:http2's
 * createSecureServer with allowHTTP1; the same request listener serves both through its
 * compatibility API). Certificates are reloaded on SIGHUP and when their files change — fs.watch
 * on the folders, since Kubernetes swaps a Secret volume's `..data` symlink rather than writing
 * the files — with setSecureContext: new handshakes get the new pair, open connections keep
 * theirs, none is dropped. A pair that does not load (garbage, a key of another certificate, a
 * half-written file) is refused: the old one stays and the error is logged loudly.
 */
export interface TlsFiles {
  cert: string;
  key: string;
}
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

const MAX_PEM_BYTES = 1024 * 1024;

/**
 * A certificate or key file: opened non-blocking and type-checked on the handle (a FIFO would hang
 * a plain open, at start and at every reload), bounded before reading, refused in words.
 */
async function readBounded(file: string, what: string): Promise<Buffer> {
  return readRegularFile(file, {
    maxBytes: MAX_PEM_BYTES,
    refuse: (why) =>
      new UsageError(
        `TLS ${what} ${file} ${why}; give the ${what} file itself as --tls-${what === 'certificate' ? 'cert' : 'key'}`,
        { subject: file },
        'AIRLOCK_TLS_FILE',
      ),
  });
}

/** Read and check a pair (the key must belong to the certificate); a UsageError names what is wrong, in words. */
export async function loadTlsPair(f: TlsFiles): Promise<TlsPair> {
  const pair = { cert: await readBounded(f.cert, 'certificate'), key: await readBounded(f.key, 'key') };
  const refuse = (subject: string, why: string) => new UsageError(why, { subject }, 'AIRLOCK_TLS_FILE');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.cert);
  } catch {
    throw refuse(
      f.cert,
      `TLS certificate ${f.cert} is not a PEM certificate; give the certificate file (-----BEGIN CERTIFICATE-----, the server's first) as --tls-cert`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pair.key);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' ? 'is passphrase-protected' : 'is not a PEM private key';
    throw refuse(f.key, `TLS key ${f.key} ${why}; give the private key of the certificate, unencrypted (-----BEGIN PRIVATE KEY-----), as --tls-key`);
  }
  if (!cert.checkPrivateKey(key)) {
    throw refuse(f.key, `TLS key ${f.key} does not belong to certificate ${f.cert}; give the key made with that certificate (or the certificate of this key)`);
  }
  try {
    createSecureContext(pair);
  } catch {
    // Each part parses and they match: what is left is a chain or key OpenSSL will not use (an old algorithm, a broken chain).
    throw refuse(
      f.cert,
      `TLS certificate ${f.cert} and key ${f.key} are refused by the TLS library (an unsupported algorithm or a broken certificate chain); make a new pair, e.g. openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes`,
    );
  }
  return pair;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface TlsServer {
  server: Http2SecureServer;
  /** Re-read the files; true when the new pair is in use. Never throws. */
  reload(): Promise<boolean>;
  /** Stop accepting; finish in-flight requests; idle connections closed at once, the rest after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

export function createTlsServer(pair: TlsPair, files: TlsFiles | null, listener: Listener, log: (line: string) => void): TlsServer {
  const server = createSecureServer({ ...pair, allowHTTP1: true }, listener as unknown as (req: Http2ServerRequest, res: Http2ServerResponse) => void);
  // HTTP/1.1 connections and their requests in progress, so close() can end idle keep-alives at once.
  let closing = false;
  const busy = requestsInProgress(server, 'secureConnection', () => closing, finish);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    if (closing) session.close();
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('tlsClientError', () => {}); // a client that fails its handshake is its own problem

  // What the certificate and key files are now (through symbolic links): a folder event that
  // leaves both as they were (a log written beside them, any unrelated file) reloads nothing, so a
  // reload's own log line in that folder cannot start the next one.
  const identity = (): string =>
    files === null
      ? ''
      : [files.cert, files.key]
          .map((p) => {
            try {
              const st = statSync(p);
              return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
            } catch {
              return 'absent';
            }
          })
          .join('|');
  let seen = identity();

  let reloading: Promise<boolean> | null = null;
  const reload = (): Promise<boolean> => {
    if (files === null) return Promise.resolve(false);
    reloading ??= (async () => {
      seen = identity();
      try {
        const next = await loadTlsPair(files);
        server.setSecureContext(next);
        log(`airlock serve: TLS certificate reloaded from ${files.cert}`);
        return true;
      } catch (err) {
        log(`airlock serve: ERROR: TLS CERTIFICATE NOT RELOADED, still using the previous one: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      } finally {
        reloading = null;
      }
    })();
    return reloading;
  };

  // Watch the folders (a Secret volume replaces a symlink, not the files); debounce bursts; reload
  // only when the certificate or key file itself changed.
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | null = null;
  if (files !== null) {
    for (const dir of new Set([dirname(files.cert), dirname(files.key)])) {
      try {
        const w = watch(dir, () => {
          if (timer) clearTimeout(timer);
          timer = setTimeout(() => {
            timer = null;
            if (identity() !== seen) void reload();
          }, 200);
          timer.unref();
        });
        w.on('error', (err) => log(`airlock serve: watching ${dir} for new certificates: ${String(err)}; SIGHUP still reloads`));
        watchers.push(w);
      } catch (err) {
        log(`airlock serve: cannot watch ${dir} for new certificates (${String(err)}); SIGHUP still reloads`);
      }
    }
  }

  return {
    server,
    reload,
    close: async (graceMs) => {
      closing = true;
      for (const w of watchers) w.close();
      if (timer) clearTimeout(timer);
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sessions) s.close(); // graceful: open streams finish
      for (const [s, c] of busy) if (c.busy <= 0 && (s as TLSSocket).alpnProtocol !== 'h2') finish(s);
      const t = setTimeout(() => {
        for (const s of sessions) s.destroy();
        for (const s of busy.keys()) s.destroy();
      }, graceMs);
      await closed;
      clearTimeout(t);
    },
  };
}
