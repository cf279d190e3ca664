import { resolve } from 'node:path';
import { numeric, parse } from './args.js';
import { log, out, type CliContext, type Command } from './context.js';
import { trapFor } from './interrupt.js';
import { NUMBERS, usage } from './serve-flags.js';
import { UsageError } from '../errors.js';

// Start-up: `serve --help` and a plain `serve` load only what they use. The assembly
// (src/start/serve.ts) imports the server and what the options ask for where they ask.

const command: Command = {
  summary: 'serve the active (or pinned) version of a store',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values, numbers: n } = parse(
      argv,
      {
        store: { type: 'string' },
        library: { type: 'string' },
        'site-host': { type: 'string', multiple: true },
        version: { type: 'string' },
        deployment: { type: 'string' },
        enable: { type: 'string', multiple: true },
        disable: { type: 'string', multiple: true },
        port: numeric(NUMBERS.port),
        host: { type: 'string' },
        workers: numeric(NUMBERS.workers),
        'access-log': { type: 'string' },
        'cache-mb': numeric(NUMBERS['cache-mb']),
        'assistant-url': { type: 'string' },
        'assistant-model': { type: 'string' },
        'assistant-model-name': { type: 'string' },
        'rate-limit-org-hour': numeric(NUMBERS['rate-limit-org-hour']),
        'rate-limit-ip-day': numeric(NUMBERS['rate-limit-ip-day']),
        values: { type: 'string' },
        mirror: { type: 'boolean' },
        'mirror-tokens': { type: 'string' },
        metrics: { type: 'boolean' },
        follow: { type: 'string' },
        trust: { type: 'string', multiple: true },
        'allow-unsigned': { type: 'boolean' },
        'follow-poll-ms': numeric(NUMBERS['follow-poll-ms']),
        'fleet-lead-ms': numeric(NUMBERS['fleet-lead-ms']),
        'skew-grace': numeric(NUMBERS['skew-grace']),
        'base-path': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
      },
      false,
    );
    if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined))
      throw new UsageError('--tls-cert and --tls-key go together', { subject: values['tls-cert'] === undefined ? '--tls-cert' : '--tls-key' });
    if (values.library !== undefined)
      return (await import('../start/library.js')).startLibrary({
        flags: values,
        cacheMb: n['cache-mb'],
        cwd: ctx.cwd,
        env: ctx.env,
        log: (line) => log(ctx, line),
        onUrl: (url) => out(ctx, url),
        trap: () => trapFor(ctx),
      });
    if (values['site-host'] !== undefined) throw new UsageError('--site-host maps host names to the sites of a --library', { subject: '--site-host' });
    const { startServe } = await import('../start/serve.js');
    return startServe({
      flags: {
        ...values,
        'mirror-tokens': values['mirror-tokens'] && resolve(ctx.cwd, values['mirror-tokens']),
        trust: values.trust?.map((t) => resolve(ctx.cwd, t)),
      },
      valuesFile: values.values === undefined ? undefined : resolve(ctx.cwd, values.values),
      tlsFiles: values['tls-cert'] === undefined ? null : { cert: resolve(ctx.cwd, values['tls-cert']), key: resolve(ctx.cwd, values['tls-key']!) },
      metrics: values.metrics === true,
      workers: n.workers,
      cacheMb: n['cache-mb'],
      rateLimitOrgHour: n['rate-limit-org-hour'],
      rateLimitIpDay: n['rate-limit-ip-day'],
      accessLog: values['access-log'],
      assistantUrl: values['assistant-url'],
      env: ctx.env,
      cwd: ctx.cwd,
      log: (line) => log(ctx, line),
      onUrl: (url) => out(ctx, url),
      trap: () => trapFor(ctx),
      progress: async () => {
        const [{ Progress }, { downloadReporter }] = await Promise.all([import('./progress.js'), import('./reporters.js')]);
        const p = new Progress(ctx.stderr, { interactive: ctx.interactive });
        return { log: (line) => p.log(line), onDownload: downloadReporter(p, 'airlock serve: download'), end: () => p.end() };
      },
    });
  },
};
export default command;
