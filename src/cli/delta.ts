import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { loadPrivateKey } from '../package/keys.js';
import { makeDelta } from '../delta/index.js';
import { parse } from './args.js';
import { log, printResult, type CliContext, type Command } from './context.js';
import { interruptedError, trapFor } from './interrupt.js';
import { SPLIT_HELP, splitOption } from './volumes.js';
import { splitWritten } from '../package/volumes/split-written.js';
import { shown } from '../util/terminal.js';
import { checkOutFolder } from './out-file.js';

const usage = `usage: airlock delta OLD.airlock NEW.airlock [--out DIR] [--sign-key FILE] [--split SIZE] [--json]

On the connected side: write what carries the isolated side from version OLD to version NEW.
  DIR/<domain>-<new>.delta.airlock  names OLD by its manifest's sha256 and carries only new files
                                    (whole) and changed files (byte-level fossil deltas where smaller)
                                    plus NEW's complete manifest; import it where OLD is in the store
  DIR/<domain>-<new>.full.airlock   NEW as a full package in canonical form (bundle.tar): the exact
                                    version the receiver will hold; keep it as the next delta's OLD
Both are signed with --sign-key (the delta's manifest and the target manifest); without it both
are unsigned and importers need --allow-unsigned. A full package stays possible at any time.
  --out DIR        output folder, created when missing (default: the current folder)
  --sign-key FILE  Ed25519 private key (airlock keygen)
${SPLIT_HELP}
                      (only the delta is split: the full package stays on this side as the next OLD)
  --json           print a JSON summary on stdout

Existing outputs are never replaced: exit 2 (AIRLOCK_EXISTS), like every output of every command;
remove them or choose another --out.
Exit codes: 0 ok, 1 failure (I/O), 2 usage (an output already there included), 4 OLD or NEW failed verification.`;

const command: Command = {
  summary: 'write a delta package from one version to the next',
  usage,
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { values, positionals } = parse(argv, {
      out: { type: 'string' },
      'sign-key': { type: 'string' },
      json: { type: 'boolean' },
      split: { type: 'string' },
    });
    const split = splitOption(values.split);
    if (positionals.length !== 2) throw new UsageError('airlock delta takes OLD.airlock and NEW.airlock', { subject: 'OLD NEW' });
    const signKey = values['sign-key'] ? await loadPrivateKey(resolve(ctx.cwd, values['sign-key'])) : undefined;
    const outDir = resolve(ctx.cwd, values.out ?? '.');
    await checkOutFolder(outDir, '--out');
    const trap = trapFor(ctx);
    const r = await makeDelta({
      oldPkg: resolve(ctx.cwd, positionals[0]!),
      newPkg: resolve(ctx.cwd, positionals[1]!),
      outDir,
      signKey,
      signal: trap.signal,
      splitting: split !== undefined,
    }).catch((err: unknown) => {
      throw trap.signal.aborted ? interruptedError(trap, 'no delta and no full package were written', err) : err;
    });
    if (!signKey) log(ctx, 'warning: the delta and the full package are unsigned (no --sign-key); importers must pass --allow-unsigned');
    const pct = ((100 * r.deltaBytes) / r.fullBytes).toFixed(2);
    const volumes =
      split === undefined
        ? null
        : await splitWritten(r.delta, split, signKey, trap.signal).catch((err: unknown) => {
            throw trap.signal.aborted ? interruptedError(trap, shown`the delta and the full package are kept, unsplit: ${r.delta}, ${r.full}`, err) : err;
          });
    printResult(
      ctx,
      Boolean(values.json),
      { ok: true, ...r, volumes },
      () =>
        (volumes ? volumes.volumes.map((v) => shown`${v}`).join('\n') : shown`${r.delta}`) +
        `\n  ${r.deltaBytes} bytes (${pct} % of the full package, ${r.fullBytes} bytes): ${r.ops.patch} patched, ${r.ops.whole} whole, ${r.ops.copy} copied, ${r.unchanged} unchanged, ${r.removed} removed\n` +
        shown`${r.full}`,
    );
    return 0;
  },
};
export default command;
