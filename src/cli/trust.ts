import { USAGE } from './trust-flags.js';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { THRESHOLD } from '../store/policy-flags.js';
import { draftToFile, initFromFlags, rotateFromFiles, showPolicy, signPolicyFile, type TrustReport } from '../store/trust-commands.js';
import { STORE_FLAGS, storeFromFlags, storeToCreate } from './store-flag.js';
import { numeric, parse, parseIntFlag, requireString } from './args.js';
import { checkOutFile } from './out-file.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish, type StopAt } from './stop-or-finish.js';

const common = {
  ...STORE_FLAGS,
  json: { type: 'boolean' },
  key: { type: 'string', multiple: true },
  threshold: numeric(THRESHOLD),
  'domain-threshold': { type: 'string', multiple: true },
  identity: { type: 'string' },
  'sign-key': { type: 'string', multiple: true },
  serial: numeric({ min: 1 }),
  out: { type: 'string' },
  policy: { type: 'string' },
  sig: { type: 'string', multiple: true },
} as const;

const command: Command = {
  summary: "the store's trust policy: keys, thresholds, rotation",
  usage: USAGE,
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const { values, positionals, numbers } = parse(rest, common);
    // Resolved once, only by the subcommands that use a store (draft and sign do not).
    let chosen = '';
    const store = () => chosen;
    const flags = { ...values, threshold: numbers.threshold };
    /** An --out the subcommand will write: a new file outside any store (exit 2 otherwise). */
    const outFile = async () => {
      const out = resolve(ctx.cwd, requireString(values.out, '--out'));
      await checkOutFile(out, { flag: '--out', force: false });
      return out;
    };
    const report = await stopOrFinish(ctx, 'trust', 'nothing was changed', subcommand);
    printResult(ctx, Boolean(values.json), report.json, report.text);
    return 0;

    async function subcommand(lock: StopAt): Promise<TrustReport> {
      switch (sub) {
        case 'init':
          chosen = await storeToCreate(values, ctx);
          return initFromFlags(store, flags, values['sign-key'] ?? [], ctx.cwd, lock);
        case 'draft': {
          const serial = parseIntFlag(requireString(values.serial, '--serial'), '--serial', 1)!;
          return draftToFile(await outFile(), flags, serial, ctx.cwd);
        }
        case 'sign': {
          if (positionals.length !== 1) throw new UsageError('trust sign takes exactly one POLICY.json', { subject: 'POLICY' });
          const out = await outFile();
          return signPolicyFile(positionals[0]!, requireString(values.key?.[0], '--key'), out, ctx.cwd);
        }
        case 'rotate':
          chosen = await storeFromFlags(values, ctx);
          return rotateFromFiles(store, requireString(values.policy, '--policy'), values.sig ?? [], ctx.cwd, lock);
        // The chain is verified from its root: a broken one is exit 4 with its code, naming the file.
        case 'show':
          chosen = await storeFromFlags(values, ctx);
          return showPolicy(store());
        default:
          throw new UsageError(`trust takes init, draft, sign, rotate or show, got ${JSON.stringify(sub ?? '')}`, { subject: 'trust' });
      }
    }
  },
};
export default command;
