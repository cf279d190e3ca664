import { numeric } from './args.js';
import { VENDOR_HELP } from './vendor-help.js';
import { SPLIT_HELP } from './volumes.js';

/** `airlock fetch`'s help text and flags (src/cli/fetch.ts parses the flags and runs the command). */
export const usage = `usage: airlock fetch --domain D [--api-url URL] [--job JOBID] [--out DIR] [--version-label V] [--sign-key FILE] [--trust PUBFILE]... [--base OLD.airlock] [--split SIZE] [--vendor KINDS [--vendor-mirror ORIGIN=URL]... [--vendor-observe [--vendor-chromium PATH]]] [--rate-window S] [--json]

Start (or reuse --job) a static export job of D, wait for it, download the archive (resuming
after broken connections, expired links and interrupted runs), verify it and write
DIR/<domain>-<version>.airlock. Prints the package path (or a JSON summary with --json).

  --domain D          the documentation site's domain
  --api-url URL       the service's base URL (default: $AIRLOCK_API_URL)
  --job JOBID         reuse an existing export job instead of starting one
  --out DIR           output folder (default: the current folder)
  --version-label V   the package's version label (default: the job's creation time, YYYYMMDD-HHMMSS)
  --sign-key FILE     sign the manifest with this Ed25519 private key (airlock keygen); without it
                      the package is unsigned (a warning says so) and import needs --allow-unsigned
  --trust PUBFILE     against an airlock mirror (which offers the original package): the package's
                      signature must verify with one of these keys (repeatable); without it a
                      mirror's signature is not checked and is reported as unverified
  --base OLD.airlock  also write what carries the isolated side from OLD to the new version, as
                      airlock delta OLD NEW would: DIR/<domain>-<version>.delta.airlock (carry it)
                      and DIR/<domain>-<version>.full.airlock (keep it: the next --base)
${VENDOR_HELP}
${SPLIT_HELP}
                      (with --base, the delta is split)
  --rate-window S     the download gives up (exit 1, AIRLOCK_DOWNLOAD_TOO_SLOW, the part kept for a
                      resume) when it brings less than 1 KiB/s over S seconds (default 30; 0.1 to 3600)
  --json              print a JSON summary on stdout

The admin key comes from AIRLOCK_ADMIN_KEY or AIRLOCK_ADMIN_KEY_FILE, never from a flag.
An existing DIR/<domain>-<version>.airlock (or volume, or delta) is never replaced: exit 2
(AIRLOCK_EXISTS), like every output of every command; remove it or choose another --out or
--version-label. With --version-label this is checked before any request, otherwise as soon as
the job's creation time is known, always before the download.
Ctrl-C during the download keeps the partial download (exit 1); run the same command again to resume.
Exit codes: 0 ok, 1 failure or interrupted, 2 usage (an output already there included), 3 the export job failed, 4 verification failed, 5 auth.`;

export const FETCH_OPTIONS = {
  domain: { type: 'string' },
  'api-url': { type: 'string' },
  job: { type: 'string' },
  out: { type: 'string' },
  'version-label': { type: 'string' },
  'sign-key': { type: 'string' },
  json: { type: 'boolean' },
  trust: { type: 'string', multiple: true },
  split: { type: 'string' },
  vendor: { type: 'string' },
  'vendor-mirror': { type: 'string', multiple: true },
  'vendor-observe': { type: 'boolean' },
  'vendor-chromium': { type: 'string' },
  base: { type: 'string' },
  'rate-window': numeric({ min: 0.1, max: 3600, decimals: true, unit: 'seconds' }),
} as const;
