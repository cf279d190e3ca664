import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { VERSION_LABEL, checkDomain, checkLabel } from '../package/label.js';
import { loadPrivateKey } from '../package/keys.js';
import { packArchive } from '../package/pack.js';
import { parse, requireString } from './args.js';
import { checkOutFolder } from './out-file.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { SPLIT_HELP, splitOption } from './volumes.js';
import { splitWritten } from '../package/volumes/split-written.js';
import { vendorAsk, vendorCollector } from '../fetch/vendor/index.js';
import { VENDOR_HELP } from './vendor-help.js';
import { finishedAfter, interruptedError, trapFor } from './interrupt.js';

const usage = `usage: airlock pack ARCHIVE --domain D [--version-label V] [--sign-key FILE] [--expires-at TIME] [--audience ID] [--out DIR] [--split SIZE] [--vendor KINDS [--vendor-mirror ORIGIN=URL]... [--vendor-observe [--vendor-chromium PATH]]] [--json]

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

const command: Command = {
  summary: 'turn an export archive obtained another way into a verified package',
  usage,
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { values, positionals } = parse(argv, {
      domain: { type: 'string' },
      'version-label': { type: 'string' },
      'sign-key': { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      split: { type: 'string' },
      vendor: { type: 'string' },
      'vendor-mirror': { type: 'string', multiple: true },
      'vendor-observe': { type: 'boolean' },
      'vendor-chromium': { type: 'string' },
      'expires-at': { type: 'string' },
      audience: { type: 'string' },
    });
    const split = splitOption(values.split);
    const vendor = vendorAsk(
      'pack',
      values,
      { chromium: values['vendor-chromium'] === undefined ? undefined : resolve(ctx.cwd, values['vendor-chromium']), env: ctx.env },
      (line) => log(ctx, shown`${line}`),
    );
    if (positionals.length !== 1) throw new UsageError('airlock pack takes exactly one ARCHIVE', { subject: 'ARCHIVE' });
    const domain = checkDomain(requireString(values.domain, '--domain'));
    const version = values['version-label'] === undefined ? undefined : checkLabel(values['version-label']);
    const outDir = resolve(ctx.cwd, values.out ?? '.');
    await checkOutFolder(outDir, '--out');
    const signKey = values['sign-key'] ? await loadPrivateKey(resolve(ctx.cwd, values['sign-key'])) : undefined;
    const archivePath = resolve(ctx.cwd, positionals[0]!);
    if (!values.json) log(ctx, `checking ${archivePath}`);
    // Stops while it reads and writes (nothing is left); once the package has its name, it finishes.
    const trap = trapFor(ctx);
    const stopped = (left: string) => (err: unknown) => {
      throw trap.signal.aborted ? interruptedError(trap, left, err) : err;
    };
    const r = await packArchive({
      archivePath,
      signal: trap.signal,
      splitting: split !== undefined,
      domain,
      version,
      outDir,
      signKey,
      expiresAt: values['expires-at'],
      audience: values.audience,
      ...(vendor.asked
        ? { vendor: vendorCollector({ ...vendor.asked, onSkipped: (u) => log(ctx, shown`airlock pack: --vendor: not vendored (not an https URL): ${u}`) }) }
        : {}),
    }).catch(stopped('no package was written'));
    if (!signKey) log(ctx, `warning: ${r.package} is unsigned (no --sign-key); importers must pass --allow-unsigned to accept it`);
    const volumes =
      split === undefined ? null : await splitWritten(r.package, split, signKey, trap.signal).catch(stopped(shown`the package is kept, unsplit: ${r.package}`));
    finishedAfter(ctx, 'pack', trap);
    printResult(ctx, Boolean(values.json), { ok: true, ...r, volumes, ...(vendor.observed() ? { vendorObserve: vendor.observed() } : {}) }, () =>
      volumes ? volumes.volumes.join('\n') : r.package,
    );
    return 0;
  },
};
export default command;
