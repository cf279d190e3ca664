import { VOLUMES_HELP } from './volumes.js';

/** `airlock import`'s help text (src/cli/import.ts parses the flags and runs the command). */
export const USAGE = `usage: airlock import PKG... [--volumes DIR,...] [--store DIR | --library LIB] [--trust PUBFILE]... [--allow-unsigned] [--allow-downgrade] [--activate] [--precompress] [--prepare-html] [--json]

Verify a .airlock package (signature, archive digest, archive safety, every file digest) and add
its version to the store, all or nothing; with --activate, make it active. A server prepares the
rest when it loads the version, in the background: it transforms the HTML (each page asked for
first, never serving an untransformed page), then precompresses the text assets (br, gzip),
serving each uncompressed until its variants are on disk. \`airlock list\` shows what is pending.
  --store DIR        the store (default: $AIRLOCK_STORE, else ./airlock-store)
  --library LIB      or the library LIB: the store LIB/DOMAIN of the package's domain (created
                     with its first import); each site keeps its own trust, audit log and versions
  --trust PUBFILE    trust this Ed25519 public key (repeatable); STORE/trusted-keys/*.pub are trusted too
                     (a store with a trust policy, airlock trust, counts only its policy's keys)
  --allow-unsigned   accept a package without a signature
  --allow-downgrade  import even a package older than the newest this store ever imported for its
                     domain (its sequence, else its createdAt), expired, or addressed to another
                     store (recorded in the audit log, STORE/audit.log, which every store keeps)
  --activate         make the version active once imported (and prepared, with the options below)
  --precompress      precompress the text assets before returning (and before --activate): for
                     servers that cannot write into the store
  --no-precompress   leave precompression to the server (the default; kept for scripts)
  --prepare-html     also transform the HTML for the default deployment (air-gapped) before
                     returning: for servers that cannot write into the store
${VOLUMES_HELP}
  --json             print one JSON document on stdout ({ok, package, store, version, status, activated, variants, html, volumes})

Volumes are read in place (read-only media, several folders), never joined or removed; the whole
set is checked against its signed table before the store is touched, naming a missing, duplicated,
truncated, reordered, foreign or damaged volume (exit 4): copy just that one again.

Ctrl-C (or SIGTERM) before the commit leaves the store as it was; repeated signals wait for that.
Exit codes: 0 ok (also when the version was already there), 1 failure or interrupted, 2 usage,
4 verification failed (nothing is added).`;
