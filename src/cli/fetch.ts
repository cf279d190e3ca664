import { resolve } from 'node:path';
import { AirlockError, UsageError } from '../errors.js';
import { fetchPackage, type FetchEvent } from '../fetch/fetch.js';
import { Progress } from './progress.js';
import { fetchReporter } from './reporters.js';
import { loadPrivateKey, loadPublicKey } from '../package/keys.js';
import { checkDomain } from '../package/label.js';
import { ServiceClient } from '../upstream/client.js';
import { checkKeyType, readAdminKey } from '../upstream/keys.js';
import { numeric, parse, requireString } from './args.js';
import { checkOutFolder } from './out-file.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { SPLIT_HELP, splitOption, splitWritten } from './volumes.js';
import { observeLine, vendorCollector, vendorFlags, type ObserveReport } from '../fetch/vendor/index.js';
import { VENDOR_HELP } from './vendor-help.js';
import { makeDelta } from '../delta/index.js';
import { readPackage } from '../package/reader.js';
import { interruptedError, trapFor } from './interrupt.js';
import { shown } from '../util/terminal.js';

const usage = `usage: airlock fetch --domain D [--api-url URL] [--job JOBID] [--out DIR] [--version-label V] [--sign-key FILE] [--trust PUBFILE]... [--base OLD.airlock] [--split SIZE] [--vendor KINDS [--vendor-mirror ORIGIN=URL]... [--vendor-observe [--vendor-chromium PATH]]] [--rate-window S] [--json]

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

/**
 * The signing warning, given once the form is known (before the download): only a raw archive
 * packaged here without --sign-key ends unsigned; a mirror's original package keeps its
 * signature (the summary's `signed` and `signature` say whether --trust checked it).
 */
function formWarnings(report: (e: FetchEvent) => void, warn: (line: string) => void, o: { signed: boolean; trust: boolean }): (e: FetchEvent) => void {
  return (e) => {
    if (e.type === 'form' && e.form === 'archive') {
      if (!o.signed) warn('airlock fetch: warning: no --sign-key: the package will not be signed here, and airlock import accepts an unsigned package only with --allow-unsigned (airlock keygen makes a key)');
      if (o.trust) warn('airlock fetch: warning: --trust is not used: the service sent a raw export archive, not a signed package (--trust checks the package of an airlock mirror)');
    }
    report(e);
  };
}

const command: Command = {
  summary: 'export, download, verify and package a documentation site',
  usage,
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { values, numbers } = parse(argv, {
      domain: { type: 'string' }, 'api-url': { type: 'string' }, job: { type: 'string' }, out: { type: 'string' },
      'version-label': { type: 'string' }, 'sign-key': { type: 'string' }, json: { type: 'boolean' },
      trust: { type: 'string', multiple: true }, split: { type: 'string' }, vendor: { type: 'string' }, 'vendor-mirror': { type: 'string', multiple: true }, 'vendor-observe': { type: 'boolean' }, 'vendor-chromium': { type: 'string' }, base: { type: 'string' },
      'rate-window': numeric({ min: 0.1, max: 3600, decimals: true, unit: 'seconds' }),
    }, false);
    const rateWindowS = numbers['rate-window'];
    const split = splitOption(values.split);
    const vendorAsked = vendorFlags(values.vendor, values['vendor-mirror'], { observe: values['vendor-observe'], chromium: values['vendor-chromium'] === undefined ? undefined : resolve(ctx.cwd, values['vendor-chromium']), env: ctx.env });
    let observed: ObserveReport | undefined;
    if (vendorAsked?.observe) vendorAsked.observe.onReport = (r) => {
      observed = r;
      log(ctx, shown`${observeLine('fetch', r)}`);
    };
    if (vendorAsked && values.base !== undefined) throw new UsageError('--vendor and --base: a delta cannot carry vendored files yet; fetch the full package (drop --base)', { subject: '--vendor' });
    const base = values.base === undefined ? undefined : resolve(ctx.cwd, requireString(values.base, '--base'));
    const domain = checkDomain(requireString(values.domain, '--domain')); // usage (2) before the key check (5)
    if (base) {
      // What the delta needs of OLD is known now: refused before the export is started, never after a download.
      const old = (await readPackage(base)).manifest;
      if (old.domain !== domain) throw new UsageError(`--base ${base} is a package of ${old.domain}, not of --domain ${domain}; a delta joins two versions of one site`, { subject: '--base' });
      if (values['version-label'] !== undefined && values['version-label'] === old.version) throw new UsageError(`--base ${base} is version ${old.version}, the --version-label asked for; a delta needs two different version labels`, { subject: '--base' });
    }
    const outDir = resolve(ctx.cwd, values.out ?? '.');
    await checkOutFolder(outDir, '--out');
    const apiUrl = values['api-url'] ?? ctx.env.AIRLOCK_API_URL;
    if (!apiUrl) throw new UsageError('no API URL: pass --api-url or set AIRLOCK_API_URL', { subject: '--api-url' });
    // Key type checked before anything touches the network (exit 5, no request sent).
    const adminKey = checkKeyType(await readAdminKey(ctx.env), 'admin');
    const signKey = values['sign-key'] ? await loadPrivateKey(resolve(ctx.cwd, values['sign-key'])) : undefined;
    const trust = await Promise.all((values.trust ?? []).map((p) => loadPublicKey(resolve(ctx.cwd, p))));
    // Ctrl-C (or SIGTERM, SIGHUP, repeated): stop cleanly, keep the part for a resume, never
    // leave a half-written package. Every call of the export API (the wait for its answer, the
    // waits between retries) ends on the signal too.
    const trap = trapFor(ctx);
    const client = new ServiceClient({ baseUrl: apiUrl, adminKey, signal: trap.signal });
    const progress = new Progress(ctx.stderr, { interactive: ctx.interactive });
    try {
      const summary = await fetchPackage({
        client, domain, jobId: values.job, outDir, versionLabel: values['version-label'],
        ...(rateWindowS === undefined ? {} : { downloadLimits: { rateWindowMs: rateWindowS * 1000 }, downloadLimitNames: { rate: '--rate-window' } }),
        signKey, trust, signal: trap.signal, onEvent: formWarnings(fetchReporter(progress), (line) => progress.log(line), { signed: Boolean(signKey), trust: trust.length > 0 }),
        ...(vendorAsked ? { vendor: vendorCollector({ ...vendorAsked, signal: trap.signal, onSkipped: (u) => log(ctx, shown`airlock fetch: --vendor: not vendored (not an https URL): ${u}`) }) } : {}),
      });
      progress.end();
      if (summary.signature === 'unverified') log(ctx, shown`airlock fetch: warning: the mirror's package carries a signature that was NOT checked (no --trust); check it with: airlock verify ${summary.package} --trust KEY.pub`);
      else if (summary.form === 'package' && summary.signature === 'none') log(ctx, "airlock fetch: warning: the mirror's package is unsigned");
      const delta = base ? await makeDelta({ oldPkg: base, newPkg: summary.package, outDir, signKey, signal: trap.signal }) : null;
      const carried = delta ? delta.delta : summary.package;
      const volumes = split === undefined ? null : await splitWritten(carried, split, signKey, trap.signal);
      printResult(ctx, Boolean(values.json), { ok: true, ...summary, delta, volumes, ...(observed ? { vendorObserve: observed } : {}) }, () =>
        [summary.package, ...(delta ? [delta.full] : []), ...(volumes ? volumes.volumes : [carried])].filter((p, i, a) => a.indexOf(p) === i).map((p) => shown`${p}`).join('\n'));
      return 0;
    } catch (err) {
      // A call of the export API stopped by the signal (its own words are AIRLOCK_ABORTED): the
      // command was interrupted. The download's and the poll's own interruptions say more, as they are.
      if (trap.signal.aborted && err instanceof AirlockError && err.code === 'AIRLOCK_ABORTED') {
        throw interruptedError(trap, `${err.message}; run the same command again to continue`, err);
      }
      throw err;
    } finally {
      progress.end();
    }
  },
};
export default command;
