import { USAGE } from './import-flags.js';
import { loadPublicKey } from '../package/keys.js';
import { importPrepared } from '../store/import-prepared.js';
import { resolveStore } from '../store/paths.js';
import { packageDomain, siteStore } from '../store/library.js';
import { libraryForImport } from './store-flag.js';
import { packageArgs } from './volumes.js';
import { parse } from './args.js';
import { printResult, type Command } from './context.js';
import { Progress } from './progress.js';
import { importReporter } from './reporters.js';
import { shown } from '../util/terminal.js';
import { interruptedError, trapFor } from './interrupt.js';
import { UsageError } from '../errors.js';

const command: Command = {
  summary: 'verify a package and add its version to the store',
  usage: USAGE,
  async run(argv, ctx) {
    // Taken over first: a signal from here on is this command's to answer (nothing is added before the
    // commit; see below), never the start-up trap's.
    const trap = trapFor(ctx);
    const { signal } = trap;
    const { values, positionals } = parse(argv, {
      store: { type: 'string' },
      library: { type: 'string' }, // the site is the package's own domain: no --site
      trust: { type: 'string', multiple: true },
      'allow-unsigned': { type: 'boolean' },
      'allow-downgrade': { type: 'boolean' },
      activate: { type: 'boolean' },
      precompress: { type: 'boolean' },
      'no-precompress': { type: 'boolean' },
      'prepare-html': { type: 'boolean' },
      json: { type: 'boolean' },
      volumes: { type: 'string', multiple: true },
    });
    if (values.precompress && values['no-precompress'])
      throw new UsageError('--precompress and --no-precompress contradict each other', { subject: '--precompress' });
    const args = await packageArgs(positionals, values.volumes, ctx.cwd);
    if (args.kind === 'file' && positionals.length !== 1) throw new UsageError('import takes exactly one package path', { subject: 'PKG' });
    const library = libraryForImport(values, ctx.cwd);
    if (library !== null && args.kind !== 'file')
      throw new UsageError("--library takes one package file; import volumes into the site's store with --store LIB/DOMAIN", { subject: '--library' });
    // A library's site is the package's own domain (its folder is created with the store on its first import).
    const store =
      library === null
        ? resolveStore(values.store, ctx.env, ctx.cwd)
        : await siteStore(library, await packageDomain((args as { path: string }).path), "the package's domain");
    const trust = await Promise.all((values.trust ?? []).map((p) => loadPublicKey(p)));
    const progress = new Progress(ctx.stderr, { interactive: ctx.interactive });
    const report = importReporter(progress);
    // Repeated signals wait for the import to stop (see importPrepared).
    let committed: string | null = null;
    try {
      const r = await importPrepared(args, {
        store,
        trust,
        allowUnsigned: values['allow-unsigned'],
        allowDowngrade: values['allow-downgrade'],
        signal,
        activate: Boolean(values.activate),
        precompress: Boolean(values.precompress),
        prepareHtml: Boolean(values['prepare-html']),
        preparers: () => import('../serve/index.js'),
        onProgress: (e) => {
          if (e.phase === 'committed') committed = e.version;
          report(e);
        },
        onVolume: (i, n, p) => {
          if (!values.json) progress.log(shown`volume ${i}/${n} ok: ${p}`);
        },
      });
      const { result } = r;
      progress.end();
      printResult(
        ctx,
        Boolean(values.json),
        { ok: true, package: r.package, store, ...result, variants: r.variants, html: r.html, volumes: r.volumes },
        () =>
          (result.status === 'imported' ? 'imported' : 'already in the store (unchanged):') + shown` ${result.version}` + (result.activated ? ' (active)' : ''),
      );
      return 0;
    } catch (err) {
      if (!signal.aborted) throw err;
      throw interruptedError(
        trap,
        committed === null
          ? shown`nothing was added to store ${store}; it is as it was`
          : shown`version ${committed} was committed to store ${store} but not activated; import it again to finish`,
        err,
      );
    } finally {
      progress.end();
    }
  },
};
export default command;
