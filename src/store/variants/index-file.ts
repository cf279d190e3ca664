import { z } from 'zod';
import { atomicWriteFile, readRegularFile } from '../../util/fsx.js';

/** variants/index.json: the finished variants, by content digest; sizes in bytes. */
const EntrySchema = z.object({ br: z.number().int().positive().optional(), gz: z.number().int().positive().optional() });
export const VariantsIndexSchema = z.object({ format: z.literal(1), files: z.record(z.string().regex(/^[0-9a-f]{64}$/), EntrySchema) });
export type VariantEntry = z.infer<typeof EntrySchema>;

/** Far above any real index (~150 bytes a file); a bigger one is damaged. */
const INDEX_BYTES = 64 * 1024 * 1024;

/**
 * The variants a version has; a missing or damaged index means none (the server serves identity),
 * and so does anything but a regular file there (a FIFO or a device is never waited on or read).
 */
export async function readVariantsIndex(path: string): Promise<Map<string, VariantEntry>> {
  let json: unknown;
  try {
    json = JSON.parse((await readRegularFile(path, { maxBytes: INDEX_BYTES, refuse: (why) => new Error(why) })).toString('utf8'));
  } catch {
    return new Map();
  }
  const parsed = VariantsIndexSchema.safeParse(json);
  return parsed.success ? new Map(Object.entries(parsed.data.files)) : new Map();
}

export async function writeVariantsIndex(path: string, entries: Map<string, VariantEntry>): Promise<void> {
  const files = Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : 1)));
  await atomicWriteFile(path, JSON.stringify({ format: 1, files }) + '\n');
}
