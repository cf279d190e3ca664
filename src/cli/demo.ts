import { rm } from 'node:fs/promises';
import { makeTempFolder } from '../util/fsx.js';
import { resolve } from 'node:path';
import { runChain } from '../demo/chain.js';
import { demoFeatures, showAssistant } from '../demo/assistant.js';
import { runServer } from '../serve/run.js';
import { trapFor } from './interrupt.js';
import { Progress } from './progress.js';
import { fetchReporter } from './reporters.js';
import { probeListen } from '../util/listen.js';
import { numeric, parse } from './args.js';
import { FLAG_RANGES } from '../values/settings.js';
import { log, out, type CliContext, type Command } from './context.js';

const usage = `usage: airlock demo [--port N] [--host H] [--dir DIR]

The whole chain on the embedded stand-in of the service, with the committed fixture site:
emulate → keygen → fetch (signed) → import (verified against that key) → serve (air-gapped),
with local-assistant answering the site's assistant from its pages and the emulator's stand-in
model; one question is asked through it. Prints the URL to open on stdout; Ctrl-C stops it.

  --port N   port to serve on (default: any free port)
  --host H   default 127.0.0.1
  --dir DIR  keep the keys, package and store in DIR (default: a temp folder removed on exit)

Exit codes: 0 stopped, 1 failure (e.g. the port is taken), 2 usage.`;

const command: Command = {
  summary: 'run emulate → fetch → import → serve on the embedded stand-in; prints the URL',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values, numbers } = parse(argv, { port: numeric(FLAG_RANGES.port), host: { type: 'string' }, dir: { type: 'string' } }, false);
    const port = numbers.port ?? 0;
    const host = values.host ?? '127.0.0.1';
    await probeListen(host, port); // before the chain's seconds of work
    const keep = values.dir !== undefined;
    // From here no signal ends the process before the emulator is stopped and the temp folder
    // (which holds a private key) is gone.
    const trap = trapFor(ctx);
    const dir = keep ? resolve(ctx.cwd, values.dir!) : await makeTempFolder('airlock-demo-');
    const removeDir = async () => {
      if (!keep) await rm(dir, { recursive: true, force: true });
    };
    const progress = new Progress(ctx.stderr, { interactive: ctx.interactive });
    let chain;
    try {
      chain = await runChain(dir, (line) => progress.log(`airlock demo: ${line}`), fetchReporter(progress), trap.signal);
    } catch (err) {
      await removeDir();
      if (trap.signal.aborted) return 0; // Ctrl-C while setting up: stopped, nothing left behind
      throw err;
    } finally {
      progress.end();
    }
    const { emulator, store } = chain;
    return runServer({
      server: { store, ...demoFeatures(emulator.url, (line) => log(ctx, line)) },
      port,
      host,
      workers: 1,
      trap,
      hangup: 'stop',
      onUrl: (url) => {
        log(ctx, `airlock demo: serve:   air-gapped (the service's search, assistant, analytics off); try: airlock list --store ${store}`);
        out(ctx, url);
        void showAssistant({ origin: url, store, emulatorUrl: emulator.url, log: (line) => log(ctx, line), signal: trap.signal });
      },
      log: (line) => log(ctx, line),
      onClosed: async () => {
        await emulator.close();
        await removeDir();
      },
    });
  },
};
export default command;
