import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { chooseSite, notALibrary, siteStore } from '../store/library.js';
import { resolveStore } from '../store/paths.js';

/** The flags that name a store: --store DIR, or a site of a library (--library LIB [--site DOMAIN]). */
export const STORE_FLAGS = { store: { type: 'string' }, library: { type: 'string' }, site: { type: 'string' } } as const;

export const STORE_HELP = `  --store DIR        the store (default: $AIRLOCK_STORE, else ./airlock-store)
  --library LIB      or a site's store in the library LIB (one store per site, LIB/DOMAIN)
  --site DOMAIN      the site (may be left out when the library holds one site)`;

type Given = { store?: string; library?: string; site?: string };

/** --library and --site checked for sense; the library's absolute path, or null for a plain store. */
function libraryOf(v: Given, cwd: string): string | null {
  if (v.library !== undefined && v.store !== undefined)
    throw new UsageError("--store and --library exclude each other: a library names its sites' stores itself (LIB/DOMAIN)", { subject: '--library' });
  if (v.site !== undefined && v.library === undefined) throw new UsageError('--site names a site of a library: give --library LIB too', { subject: '--site' });
  if (v.library === '') throw new UsageError('--library is empty; give the library folder', { subject: '--library' });
  return v.library === undefined ? null : resolve(cwd, v.library);
}

/** The store a command works on, which must exist for a library's site (a plain --store is checked by the command, as before). */
export async function storeFromFlags(v: Given, ctx: { env: NodeJS.ProcessEnv; cwd: string }): Promise<string> {
  const library = libraryOf(v, ctx.cwd);
  return library === null ? plainStore(v, ctx) : chooseSite(library, v.site);
}

/** --store DIR (or $AIRLOCK_STORE): a store, never a library's folder (its sites are stores; it is none). */
async function plainStore(v: Given, ctx: { env: NodeJS.ProcessEnv; cwd: string }): Promise<string> {
  const store = resolveStore(v.store, ctx.env, ctx.cwd);
  await notALibrary(store);
  return store;
}

/** The same for a command that may create the site's store (trust init): --site names it, else the library's only site. */
export async function storeToCreate(v: Given, ctx: { env: NodeJS.ProcessEnv; cwd: string }): Promise<string> {
  const library = libraryOf(v, ctx.cwd);
  if (library === null) return plainStore(v, ctx);
  return v.site === undefined ? chooseSite(library, undefined) : await siteStore(library, v.site);
}

/** The store of `import --library LIB`: the package's own domain, a site created on its first import. */
export function libraryForImport(v: Omit<Given, 'site'>, cwd: string): string | null {
  return libraryOf(v, cwd);
}
