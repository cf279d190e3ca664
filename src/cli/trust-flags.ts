import { STORE_HELP } from './store-flag.js';

/** `airlock trust`'s help text (src/cli/trust.ts parses the flags and runs the command). */
export const USAGE = `usage: airlock trust init   STORE --key NAME=PUBFILE[@EXPIRES]... --threshold N [--domain-threshold D=N]... [--identity ID] [--sign-key KEYFILE]... [--json]
       airlock trust draft  --key NAME=PUBFILE[@EXPIRES]... --threshold N [--domain-threshold D=N]... [--identity ID] --serial N --out NEW.json
       airlock trust sign   POLICY.json --key KEYFILE --out SIGFILE
       airlock trust rotate STORE --policy NEW.json [--sig SIGFILE]... [--json]
       airlock trust show   STORE [--json]

STORE: --store DIR, or --library LIB [--site DOMAIN]

The store's trust policy (STORE/trust/policy.json; every accepted policy is kept in STORE/trust/chain/):
named Ed25519 public keys (optionally expiring), how many DISTINCT keys must sign a package (a
default, and per-domain overrides: 2 is the two-person rule), and the store's identity (a package
built with --audience ID imports only into the store named ID). With a policy, import and verify
--store count only the policy's live keys (--trust and STORE/trusted-keys/ no longer apply) and
refuse packages for another store. Every store, with a policy or not, refuses downgrades and
expired packages and writes every import, refusal, activation, rollback, prune and policy change
to the hash-chained STORE/audit.log. A delta package is admitted as its full target package would
be: its target signatures count (airlock sign DELTA adds one), and its own manifest must be signed
by a live key of the policy.

  init     install the first policy (serial 1) into the store (created when missing)
  draft    write a new policy document (for rotate) without installing it
  sign     write the raw 64-byte Ed25519 signature of the exact bytes of POLICY.json (the same as
           openssl pkeyutl -sign -rawin -inkey KEY -in POLICY.json -out SIGFILE)
  rotate   replace the policy: NEW.json must carry a higher serial and signatures by at least
           threshold.default distinct live keys of the CURRENT policy (--sig files, or NEW.json as
           a signed envelope {format: "airlock-signed-policy/1", policy, signatures})
  show     the current policy, its chain (each rotation re-checked) and the highest sequence seen per domain

  --key NAME=PUBFILE[@EXPIRES]   a public key (SPKI PEM, airlock keygen's .pub; a private key is refused);
                                  @EXPIRES: an RFC 3339 time, in the future, after which its
                                  signatures no longer count
  --threshold N                   distinct signers a package needs (and a rotation)
  --domain-threshold D=N          another threshold for domain D
  --identity ID                   the store's identity (a package's --audience)

The store of init, rotate and show:
${STORE_HELP}

A store that has had a policy keeps it: every use re-checks the chain from its root (serial 1), and
a missing policy.json, a missing, edited or out-of-order chain entry, or a policy.json that is not
the chain's last entry stops imports (AIRLOCK_POLICY_BROKEN) until STORE/trust/ is restored.

draft and sign never replace their --out: exit 2 (AIRLOCK_EXISTS), like every output of every
command; choose another --out.

Exit codes: 0 ok, 1 failure, 2 usage (e.g. a policy exists already, an --out already there, a private key given as --key,
a key that has already expired), 4 the policy or a rotation was refused (malformed, too few
signers, serial not the next one) or the store's policy chain is broken.`;
