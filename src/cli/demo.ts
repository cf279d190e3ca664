import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveFeatures } from '../features/index.js';
import { runChain } from '../demo/chain.js';
import { createReporter } from '../fetch/index.js';
import { featureOptions } from '../serve/features.js';
import { runServer } from '../serve/run.js';
import { parse, parseIntFlag } from './args.js';
import { log, type CliContext } from './context.js';
import type { Command } from './main.js';

const usage = `usage: airlock demo [--port N] [--host H] [--dir DIR]

The whole chain on the embedded stand-in of the service, with the committed fixture site:
emulate → keygen → fetch (signed) → import (verified against that key) → serve (air-gapped).
Prints the URL to open on stdout; Ctrl-C stops it.

  --port N   port to serve on (default: any free port)
  --host H   default 127.0.0.1
  --dir DIR  keep the keys, package and store in DIR (default: a temp folder removed on exit)`;

const command: Command = {
  summary: 'run emulate → fetch → import → serve on the embedded stand-in; prints the URL',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values } = parse(argv, { port: { type: 'string' }, host: { type: 'string' }, dir: { type: 'string' } }, false);
    const port = parseIntFlag(values.port, '--port', 0, 65535) ?? 0;
    const keep = values.dir !== undefined;
    const dir = keep ? resolve(ctx.cwd, values.dir!) : await mkdtemp(join(tmpdir(), 'airlock-demo-'));
    const reporter = createReporter(ctx.stderr, ctx.interactive);
    let chain;
    try {
      chain = await runChain(dir, (line) => log(ctx, `airlock demo: ${line}`), (e) => reporter.onEvent(e));
    } catch (err) {
      if (!keep) await rm(dir, { recursive: true, force: true });
      throw err;
    } finally {
      reporter.stop();
    }
    const { emulator, store } = chain;
    return runServer({
      server: { store, ...featureOptions(resolveFeatures({ deployment: 'air-gapped' })) },
      port,
      host: values.host ?? '127.0.0.1',
      workers: 1,
      onUrl: (url) => {
        log(ctx, `airlock demo: serve:   air-gapped (search, assistant, analytics off); try: airlock list --store ${store}`);
        ctx.stdout.write(`${url}\n`);
      },
      log: (line) => log(ctx, line),
      onClosed: async () => {
        await emulator.close();
        if (!keep) await rm(dir, { recursive: true, force: true });
      },
    });
  },
};
export default command;
