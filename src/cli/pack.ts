import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { checkDomain, checkLabel } from '../package/label.js';
import { loadPrivateKey } from '../package/keys.js';
import { packArchive } from '../package/pack.js';
import { parse, requireString } from './args.js';
import { checkOutFolder } from './out-file.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { splitOption } from './volumes.js';
import { vendorAsk, vendorCollector } from '../fetch/vendor/flags.js';
import { interruptedError, trapFor } from './interrupt.js';
import { finishedAfter } from './stop-or-finish.js';
import { usage } from './pack-flags.js';

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
      split,
      domain,
      version,
      outDir,
      signKey,
      expiresAt: values['expires-at'],
      audience: values.audience,
      ...(vendor.asked
        ? { vendor: vendorCollector({ ...vendor.asked, onSkipped: (u) => log(ctx, shown`airlock pack: --vendor: not vendored (not an https URL): ${u}`) }) }
        : {}),
    }).catch(stopped(split === undefined ? 'no package was written' : 'no package and no volume were written'));
    if (!signKey) log(ctx, `warning: ${r.package} is unsigned (no --sign-key); importers must pass --allow-unsigned to accept it`);
    finishedAfter(ctx, 'pack', trap);
    printResult(ctx, Boolean(values.json), { ok: true, ...r, ...(vendor.observed() ? { vendorObserve: vendor.observed() } : {}) }, () =>
      r.volumes ? r.volumes.volumes.join('\n') : r.package,
    );
    return 0;
  },
};
export default command;
