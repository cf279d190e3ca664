import { loadPublicKey } from '../package/index.js';
import { buildVariants, importPackage, resolveStore, type ProgressEvent } from '../store/index.js';
import { parse } from './args.js';
import { log, printResult, type CliContext } from './context.js';
import type { Command } from './main.js';
import { UsageError } from '../errors.js';
import { prebuildHtmlCache } from '../serve/index.js';
import cliProgress from 'cli-progress';

const USAGE = `usage: airlock import PKG [--store DIR] [--trust PUBFILE]... [--allow-unsigned] [--activate] [--no-precompress] [--json]

Verify a .airlock package (signature, archive digest, archive safety, every file digest) and add
its version to the store, all or nothing. Then prepare it for serving: precompress its text files
(br, gzip) and transform its HTML for the default deployment (air-gapped), so \`airlock serve\`
starts at once.
  --store DIR        the store (default: $AIRLOCK_STORE, else ./airlock-store)
  --trust PUBFILE    trust this Ed25519 public key (repeatable); STORE/trusted-keys/*.pub are trusted too
  --allow-unsigned   accept a package without a signature
  --activate         make the version active once imported
  --no-precompress   skip both steps (a server then does them when it first loads the version)
  --json             print one JSON document on stdout`;

/** Progress on stderr: plain lines when not a TTY, a cli-progress bar for long counted steps on one. */
function reporter(ctx: CliContext) {
  let bar: cliProgress.SingleBar | null = null;
  const stopBar = () => { bar?.stop(); bar = null; };
  const counted = (label: string, done: number, total: number, unit: string) => {
    if (!ctx.interactive) return log(ctx, `${label}: ${done}/${total}${unit}`);
    if (!bar) {
      bar = new cliProgress.SingleBar({ stream: ctx.stderr as NodeJS.WriteStream, format: `${label} [{bar}] {percentage}% {value}/{total}${unit}` }, cliProgress.Presets.shades_classic);
      bar.start(total, 0);
    }
    bar.update(done);
    if (done >= total) stopBar();
  };
  const mb = (n: number) => Math.round(n / 1048576);
  return {
    event(e: ProgressEvent | { phase: 'html' }) {
      switch (e.phase) {
        case 'lock-wait': return log(ctx, `waiting for the store lock held by process ${e.pid}`);
        case 'verify': return log(ctx, `verifying ${e.pkg}`);
        case 'copy': return counted('copying package', mb(e.bytes), mb(e.total), ' MB');
        case 'extract': stopBar(); return log(ctx, `extracting and checking every file digest (${mb(e.total)} MB archive)`);
        case 'extracted': return log(ctx, `verified ${e.files} files, ${mb(e.bytes)} MB`);
        case 'committed': return log(ctx, `version ${e.version} committed`);
        case 'activated': return log(ctx, `version ${e.version} is now active`);
        case 'variants': return counted('precompressing', e.done, e.total, ' files');
        case 'html': return log(ctx, 'transforming HTML for air-gapped serving');
      }
    },
    stop: stopBar,
  };
}

const command: Command = {
  summary: 'verify a package and add its version to the store',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, {
      store: { type: 'string' },
      trust: { type: 'string', multiple: true },
      'allow-unsigned': { type: 'boolean' },
      activate: { type: 'boolean' },
      'no-precompress': { type: 'boolean' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new UsageError('import takes exactly one package path', { subject: 'PKG' });
    const store = resolveStore(values.store, ctx.env, ctx.cwd);
    const trust = await Promise.all((values.trust ?? []).map((p) => loadPublicKey(p)));
    const progress = reporter(ctx);
    try {
      const result = await importPackage(positionals[0]!, {
        store, trust, allowUnsigned: values['allow-unsigned'], activate: values.activate, onProgress: progress.event,
      });
      let variants = null;
      let html = null;
      // After the commit and outside the lock: the version is already safe and servable.
      if (!values['no-precompress']) {
        variants = await buildVariants(store, result.version, { onProgress: (done, total) => progress.event({ phase: 'variants', done, total }) });
        progress.event({ phase: 'html' });
        html = await prebuildHtmlCache(store, result.version);
      }
      printResult(ctx, Boolean(values.json), { ok: true, store, ...result, variants, html }, () =>
        `${result.status === 'imported' ? 'imported' : 'already in the store (unchanged):'} ${result.version}${result.activated ? ' (active)' : ''}`);
      return 0;
    } finally {
      progress.stop();
    }
  },
};
export default command;
