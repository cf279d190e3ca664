import { rm } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { numeric, parse } from './args.js';
import { FLAG_RANGES } from '../values/settings.js';
import { log, out, type CliContext, type Command } from './context.js';
import { resolveFeatures } from '../features/resolve.js';
import { featureOptions } from '../serve/features.js';
import { extractForPreview } from '../serve/preview-source.js';
import { runServer } from '../serve/run.js';
import { trapFor } from './interrupt.js';
import { probeListen } from '../util/listen.js';
import { fmtBytes } from '../util/units.js';

const usage = `usage: airlock preview ARCHIVE_OR_PKG [--port N] [--host H] [--deployment TYPE] [--enable F,...] [--disable F,...]

Serve an export archive (tar.gz, tar, zip) or a .airlock package at once, with the same rules as
airlock serve. It is extracted (with every archive-safety check) into a temporary folder that is
removed on exit, SIGINT and SIGTERM included; no store is touched. A package's files are checked
against its manifest; its signature is not (use airlock verify for that). Prints the URL on stdout.

  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1
  --deployment TYPE    cloud | client-hosted | air-gapped (default air-gapped)
  --enable F,...       turn on configurable features (as airlock serve; see its --help for the matrix)
  --disable F,...      turn off configurable features

SIGINT, SIGTERM or SIGHUP (any number of them): stop and remove the temporary folder, exit 0.
Exit codes: 0 stopped, 1 failure (e.g. the port is taken), 2 usage, 4 unsafe or malformed archive
or package.`;

const command: Command = {
  summary: 'serve an export archive or package directly, nothing kept',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values, positionals, numbers } = parse(argv, {
      port: numeric(FLAG_RANGES.port),
      host: { type: 'string' },
      deployment: { type: 'string' },
      enable: { type: 'string', multiple: true },
      disable: { type: 'string', multiple: true },
    });
    if (positionals.length !== 1) throw new UsageError('preview takes exactly one ARCHIVE_OR_PKG', { subject: 'argv' });
    const resolved = resolveFeatures({ deployment: values.deployment, enable: values.enable, disable: values.disable });
    const port = numbers.port ?? 8080;
    const host = values.host ?? '127.0.0.1';
    await probeListen(host, port); // before extracting what may be a large archive
    // From here no signal ends the process before the temp folder is gone (src/util/signals.ts).
    const trap = trapFor(ctx);
    log(ctx, `airlock preview: extracting ${positionals[0]!} into a temporary folder (every archive-safety check applies)`);
    const { dir, site } = await extractForPreview(positionals[0]!);
    try {
      log(ctx, `airlock preview: ${site.files.length} files, ${fmtBytes(site.files.reduce((n, f) => n + f.size, 0))}`);
      if (trap.signal.aborted) return 0;
      return await runServer({
        server: { site, ...featureOptions(resolved) },
        port,
        host,
        workers: 1,
        trap,
        hangup: 'stop',
        onUrl: (url) => out(ctx, url),
        log: (line) => log(ctx, line.replace('airlock serve', 'airlock preview')),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
export default command;
