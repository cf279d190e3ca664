import type { KeyObject } from 'node:crypto';
import { verifyPackage } from '../package/verify.js';
import type { PackageInput, PackageLayout } from '../package/reader.js';
import { packageReport, type Report, type VolumesRead } from '../package/verify-report.js';
import { isDeltaPackage } from '../delta/reader.js';
import { verifyDelta } from '../delta/verify.js';
import { deltaReport } from '../delta/verify-report.js';
import type { DeltaLayout } from '../delta/reader.js';
import { shown } from '../util/terminal.js';
import { admitPackage, type Admission } from './admit.js';
import { checkDeltaEnvelope } from './delta-envelope.js';
import { checkDeltaTarget } from './delta-import.js';
import { settled } from './settle.js';

export interface VerifyAsImportOptions {
  /** The package as named in the report. */
  path: string;
  volumes: VolumesRead | null;
  /** verify --store: the store, resolved once the kind of package is known; null without --store. */
  store: (() => string) | null;
  trust: KeyObject[];
  allowUnsigned: boolean;
  allowDowngrade: boolean;
}

type Envelope = Awaited<ReturnType<typeof checkDeltaEnvelope>>;

/**
 * `airlock verify`: a package or a delta checked, extracting nothing; with a store, decided
 * exactly as import would decide it (policy, thresholds, freshness), writing nothing.
 */
export async function verifyAsImport(input: PackageInput, o: VerifyAsImportOptions): Promise<Report> {
  const { trust, allowUnsigned } = o;
  if (await isDeltaPackage(input)) {
    // --store: the delta manifest's signature under the store's rule (a policy's live keys), as import checks it first.
    const store = o.store === null ? null : o.store();
    let env: Envelope | null = null;
    let overridden: string[] = [];
    const d = await verifyDelta(input, {
      trust,
      allowUnsigned,
      ...(store
        ? {
            decide: async (l: DeltaLayout) => {
              env = await checkDeltaEnvelope(store, l, { trust, allowUnsigned });
              // Read outside the lock, as for a full package: a change under way is waited for.
              overridden = await settled(store, () => checkDeltaTarget(store, l, o.allowDowngrade));
              return env;
            },
          }
        : {}),
    });
    const e = env as Envelope | null;
    return deltaReport(
      o.path,
      d,
      o.volumes,
      e === null
        ? null
        : {
            json: {
              store,
              decision: {
                rule: e.rule,
                policySerial: e.policySerial,
                overridden,
                target:
                  'its base is in the store and its order, expiry and audience hold; its signatures are counted at import, once it is rebuilt from the base',
              },
            },
            text: () =>
              shown`\nstore ${store}: its ${e.rule === 'policy' ? `trust policy ${e.policySerial}` : 'trusted keys'} accept the delta's own manifest; its base is in the store and the target's order, expiry and audience hold${overridden.length ? `, overriding ${overridden.join(', ')}` : ''}; import counts the rebuilt target's signatures as it would the full package's (threshold)`,
          },
    );
  }
  // --store: the store's decision, exactly as import would take it (policy, thresholds, freshness); nothing is written.
  const store = o.store === null ? null : o.store();
  let admission: Admission | null = null;
  const decide =
    store === null
      ? undefined
      : async (layout: PackageLayout) => {
          // Read outside the lock: an import or a policy change under way is waited for, not reported as damage.
          admission = await settled(store, () => admitPackage(store, layout, { trust, allowUnsigned, allowDowngrade: o.allowDowngrade }));
          return { signed: admission.signers.length > 0, signer: admission.signers[0] ?? null, signers: admission.signers };
        };
  const r = await verifyPackage(input, { trust, allowUnsigned, decide });
  const a = admission as Admission | null;
  return packageReport(
    o.path,
    r,
    o.volumes,
    a === null
      ? null
      : {
          json: { store, decision: { rule: a.rule, policySerial: a.policySerial, need: a.need, signerNames: a.signerNames, overridden: a.overridden } },
          text: () =>
            a.rule === 'policy'
              ? shown`\nstore ${store}: import would accept it (trust policy ${a.policySerial}: ${r.signers.length} of ${a.need} signers: ${a.signerNames.join(', ')})` +
                (a.overridden.length ? shown`, overriding ${a.overridden.join(', ')}` : '')
              : shown`\nstore ${store}: import would accept it (no trust policy: one trusted key suffices)`,
        },
  );
}
