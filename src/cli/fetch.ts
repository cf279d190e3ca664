import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { Progress } from './progress.js';
import { fetchReporter } from './reporters.js';
import { loadPrivateKey, loadPublicKey } from '../package/keys.js';
import { checkDomain } from '../package/label.js';
import { ServiceClient } from '../upstream/client.js';
import { checkKeyType, readAdminKey } from '../upstream/keys.js';
import { numeric, parse, requireApiUrl, requireString } from './args.js';
import { checkOutFolder } from './out-file.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { SPLIT_HELP, splitOption } from './volumes.js';
import { checkBase, fetchAndCarry } from '../fetch/carry.js';
import { vendorAsk, vendorCollector } from '../fetch/vendor/index.js';
import { VENDOR_HELP } from './vendor-help.js';
import { interruptedCall, trapFor } from './interrupt.js';
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
    const split = splitOption(values.split);
    const vendor = vendorAsk('fetch', values, { chromium: values['vendor-chromium'] === undefined ? undefined : resolve(ctx.cwd, values['vendor-chromium']), env: ctx.env }, (line) => log(ctx, shown`${line}`));
    if (vendor.asked && values.base !== undefined) throw new UsageError('--vendor and --base: a delta cannot carry vendored files yet; fetch the full package (drop --base)', { subject: '--vendor' });
    const base = values.base === undefined ? undefined : resolve(ctx.cwd, requireString(values.base, '--base'));
    const domain = checkDomain(requireString(values.domain, '--domain')); // usage (2) before the key check (5)
    if (base) await checkBase(base, domain, values['version-label']);
    const outDir = resolve(ctx.cwd, values.out ?? '.');
    await checkOutFolder(outDir, '--out');
    const apiUrl = requireApiUrl(values['api-url'], ctx.env);
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
      const { summary, delta, volumes, written } = await fetchAndCarry({
        client, domain, jobId: values.job, outDir, versionLabel: values['version-label'], base, split,
        ...(numbers['rate-window'] === undefined ? {} : { downloadLimits: { rateWindowMs: numbers['rate-window'] * 1000 }, downloadLimitNames: { rate: '--rate-window' } }),
        signKey, trust, signal: trap.signal, onEvent: fetchReporter(progress), warn: (line) => progress.log(line), onPackaged: () => progress.end(),
        ...(vendor.asked ? { vendor: vendorCollector({ ...vendor.asked, signal: trap.signal, onSkipped: (u) => log(ctx, shown`airlock fetch: --vendor: not vendored (not an https URL): ${u}`) }) } : {}),
      });
      printResult(ctx, Boolean(values.json), { ok: true, ...summary, delta, volumes, ...(vendor.observed() ? { vendorObserve: vendor.observed() } : {}) }, () => written.map((p) => shown`${p}`).join('\n'));
      return 0;
    } catch (err) {
      throw interruptedCall(trap, err);
    } finally {
      progress.end();
    }
  },
};
export default command;
