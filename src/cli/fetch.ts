import { FETCH_OPTIONS, usage } from './fetch-flags.js';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { Progress } from './progress.js';
import { fetchReporter } from './reporters.js';
import { loadPrivateKey, loadPublicKey } from '../package/keys.js';
import { checkDomain } from '../package/label.js';
import { ServiceClient } from '../upstream/client.js';
import { checkKeyType, readAdminKey } from '../upstream/keys.js';
import { parse, requireApiUrl, requireString } from './args.js';
import { checkOutFolder } from './out-file.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { splitOption } from './volumes.js';
import { checkBase, fetchAndCarry } from '../fetch/carry.js';
import { vendorAsk, vendorCollector } from '../fetch/vendor/flags.js';
import { interruptedCall, trapFor } from './interrupt.js';
import { shown } from '../util/terminal.js';

const command: Command = {
  summary: 'export, download, verify and package a documentation site',
  usage,
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { values, numbers } = parse(argv, FETCH_OPTIONS, false);
    const split = splitOption(values.split);
    const vendor = vendorAsk(
      'fetch',
      values,
      { chromium: values['vendor-chromium'] === undefined ? undefined : resolve(ctx.cwd, values['vendor-chromium']), env: ctx.env },
      (line) => log(ctx, shown`${line}`),
    );
    if (vendor.asked && values.base !== undefined)
      throw new UsageError('--vendor and --base: a delta cannot carry vendored files yet; fetch the full package (drop --base)', { subject: '--vendor' });
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
        client,
        domain,
        jobId: values.job,
        outDir,
        versionLabel: values['version-label'],
        base,
        split,
        ...(numbers['rate-window'] === undefined
          ? {}
          : { downloadLimits: { rateWindowMs: numbers['rate-window'] * 1000 }, downloadLimitNames: { rate: '--rate-window' } }),
        signKey,
        trust,
        signal: trap.signal,
        onEvent: fetchReporter(progress),
        warn: (line) => progress.log(line),
        onPackaged: () => progress.end(),
        ...(vendor.asked
          ? {
              vendor: vendorCollector({
                ...vendor.asked,
                signal: trap.signal,
                onSkipped: (u) => log(ctx, shown`airlock fetch: --vendor: not vendored (not an https URL): ${u}`),
              }),
            }
          : {}),
      });
      printResult(ctx, Boolean(values.json), { ok: true, ...summary, delta, volumes, ...(vendor.observed() ? { vendorObserve: vendor.observed() } : {}) }, () =>
        written.map((p) => shown`${p}`).join('\n'),
      );
      return 0;
    } catch (err) {
      throw interruptedCall(trap, err);
    } finally {
      progress.end();
    }
  },
};
export default command;
