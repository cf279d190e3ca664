import { VERSION_LABEL } from '../package/label.js';
import { VENDOR_HELP } from './vendor-help.js';
import { SPLIT_HELP } from './volumes.js';

/** `airlock pack --help`. */
export const usage = `usage: airlock pack ARCHIVE --domain D [--version-label V] [--sign-key FILE] [--expires-at TIME] [--audience ID] [--out DIR] [--split SIZE] [--vendor KINDS [--vendor-mirror ORIGIN=URL]... [--vendor-observe [--vendor-chromium PATH]]] [--json]

Turn an export archive obtained another way (the dashboard, CI, a values-file download) into a
.airlock package, as airlock fetch would have written it: the archive (tar.gz, tgz, tar or zip,
recognised by its content, not its name) is checked against every archive-safety rule and every
file is hashed; the manifest lists them; the package is written atomically as
DIR/<domain>-<version>.airlock and signed when --sign-key is given. Prints the package path
(or a JSON summary with --json). Nothing is written when the archive is refused.

  --domain D          the documentation site's domain (a host name, e.g. docs.example.com)
  --version-label V   the package's version label, ${VERSION_LABEL.source}
                      (default: the archive file's modification time, YYYYMMDD-HHMMSS UTC)
  --sign-key FILE     sign the manifest with this Ed25519 private key (airlock keygen); without it
                      the package is unsigned (a warning on stderr) and importers need --allow-unsigned
  --expires-at TIME   a store with a trust policy refuses the package after TIME (RFC 3339)
  --audience ID       only the store whose trust policy names identity ID imports it
  --out DIR           output folder, created when missing (default: the current folder)
${VENDOR_HELP}
${SPLIT_HELP}
  --json              print a JSON summary on stdout

An existing DIR/<domain>-<version>.airlock (or volume) is never replaced: exit 2 (AIRLOCK_EXISTS),
like every output of every command, before the archive is read; remove it or choose another --out
or --version-label.
Exit codes: 0 ok, 1 failure (I/O), 2 usage (bad flag, domain or label, unreadable archive or key,
an output already there), 4 the archive was refused (unsafe, malformed, too big, or already a package).`;
