import { rm } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { parse, parseIntFlag } from './args.js';
import { log, type CliContext } from './context.js';
import type { Command } from './main.js';
import { resolveFeatures } from '../features/index.js';
import { featureOptions } from '../serve/features.js';
import { extractForPreview } from '../serve/preview-source.js';
import { runServer } from '../serve/run.js';

const usage = `usage: airlock preview ARCHIVE_OR_PKG [--port N] [--host H] [--deployment TYPE] [--enable F,...] [--disable F,...]

Serve an export archive (tar.gz, tar, zip) or a .airlock package at once, with the same rules as
airlock serve. It is extracted (with every archive-safety check) into a temporary folder that is
removed on exit, SIGINT and SIGTERM included; no store is touched. A package's files are checked
against its manifest; its signature is not (use airlock verify for that). Prints the URL on stdout.

  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1
  --deployment TYPE    cloud | client-hosted | air-gapped (default air-gapped)
`;

const command: Command = {
  summary: 'serve an export archive or package directly, nothing kept',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values, positionals } = parse(argv, {
      port: { type: 'string' }, host: { type: 'string' }, deployment: { type: 'string' },
      enable: { type: 'string', multiple: true }, disable: { type: 'string', multiple: true },
    });
    if (positionals.length !== 1) throw new UsageError('preview takes exactly one ARCHIVE_OR_PKG', { subject: 'argv' });
    const resolved = resolveFeatures({ deployment: values.deployment, enable: values.enable, disable: values.disable });
    const port = parseIntFlag(values.port, '--port', 0, 65535) ?? 8080;
    // Signals during extraction must still remove the temp folder: hold them until the server runs.
    let interrupted = false;
    const early = () => { interrupted = true; };
    process.once('SIGINT', early);
    process.once('SIGTERM', early);
    const { dir, site } = await extractForPreview(positionals[0]!).finally(() => {
      process.off('SIGINT', early);
      process.off('SIGTERM', early);
    });
    const cleanup = () => rm(dir, { recursive: true, force: true });
    if (interrupted) {
      await cleanup();
      return 0;
    }
    try {
      return await runServer({
        server: { site, ...featureOptions(resolved) },
        port,
        host: values.host ?? '127.0.0.1',
        workers: 1,
        onUrl: (url) => ctx.stdout.write(url + '\n'),
        log: (line) => log(ctx, line.replace('airlock serve', 'airlock preview')),
      });
    } finally {
      await cleanup();
    }
  },
};
export default command;
