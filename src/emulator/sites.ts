import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { htmlText, htmlTitle, type Page } from './text.js';

export interface SiteConfig {
  dir: string;
  format?: 'tar.gz' | 'zip';
}

/**
 * The repository root, found by walking up to airlock's package.json: this file runs both from
 * src/ (tsx, vitest) and from dist/src/ (the built CLI), at different depths.
 */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'airlock-docs') return dir;
    if (dirname(dir) === dir) throw new Error(`airlock package root not found above ${from}`);
  }
}

/** The built-in fixture sites: docs.example.com is the committed site in fixtures/site. */
export function defaultSites(): Record<string, SiteConfig> {
  return { 'docs.example.com': { dir: join(packageRoot(), 'fixtures', 'site'), format: 'tar.gz' } };
}

/** Every regular file under `dir`, relative, "/"-separated, sorted; dotfiles skipped like an export would. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((p) => !p.split('/').some((s) => s.startsWith('.')))
    .sort();
}

/** The site's HTML pages with their titles and text, for the assistant and search. */
export async function loadPages(domain: string, dir: string): Promise<Page[]> {
  const files = (await listFiles(dir)).filter((p) => p.endsWith('.html') && p !== '404.html');
  return Promise.all(
    files.map(async (path) => {
      const html = await readFile(join(dir, path), 'utf8');
      const route = '/' + path.replace(/(^|\/)index\.html$/, '').replace(/\.html$/, '');
      return { path, url: `https://${domain}${route}`, title: htmlTitle(html) || path, text: htmlText(html) };
    }),
  );
}
