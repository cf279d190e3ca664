import { createDelta } from 'fossil-delta';
import type { FileRecord } from '../archive/index.js';
import { MAX_PATCH_SOURCE } from './format.js';

/** How one target file is built on the receiving side (pure: the planner, given file readers). */
export type Plan = { kind: 'base' } | { kind: 'copy'; from: string } | { kind: 'patch'; from: string; patch: Buffer } | { kind: 'whole' };

/** "assets/app.3f9a2c1b.js" → "assets/app.js": where a rehashed asset most likely came from. */
export function stem(path: string): string {
  return path.replace(/[.-][0-9A-Za-z_]{6,}(?=\.[A-Za-z0-9]+$)/, '');
}

export function basePeers(base: readonly FileRecord[]): { byPath: Map<string, FileRecord>; bySha: Map<string, string>; byStem: Map<string, FileRecord> } {
  const byPath = new Map(base.map((f) => [f.path, f]));
  const bySha = new Map<string, string>();
  const byStem = new Map<string, FileRecord>();
  for (const f of base) {
    if (!bySha.has(f.sha256)) bySha.set(f.sha256, f.path);
    const s = stem(f.path);
    if (s !== f.path && !byStem.has(s)) byStem.set(s, f);
  }
  return { byPath, bySha, byStem };
}

/**
 * Choose the cheapest way to carry `f`: nothing (the base has it at the same path), a copy of an
 * identical base file, a fossil delta against the base file at the same path (or the asset it was
 * rehashed from) when that is under 90 % of the file, else the file whole.
 */
export async function planFile(
  f: FileRecord,
  peers: ReturnType<typeof basePeers>,
  read: { base(p: string): Promise<Buffer>; target(p: string): Promise<Buffer> },
): Promise<Plan> {
  const same = peers.byPath.get(f.path);
  if (same && same.sha256 === f.sha256 && same.size === f.size) return { kind: 'base' };
  const twin = peers.bySha.get(f.sha256);
  if (twin !== undefined) return { kind: 'copy', from: twin };
  const source = same ?? peers.byStem.get(stem(f.path));
  if (!source || source.size > MAX_PATCH_SOURCE || f.size > MAX_PATCH_SOURCE || f.size < 64) return { kind: 'whole' };
  const patch = Buffer.from(createDelta(await read.base(source.path), await read.target(f.path)));
  return patch.length < f.size * 0.9 ? { kind: 'patch', from: source.path, patch } : { kind: 'whole' };
}
