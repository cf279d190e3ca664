import { rm, stat } from 'node:fs/promises';
import { z } from 'zod';
import { atomicWriteFile, readRegularFileIfExists } from '../util/fsx.js';

/**
 * `<part>.json` beside a partial download: the identity of the object the bytes came from,
 * independent of the (expiring) URL. A re-run reuses the part only when this identity still
 * holds: same job, and the server confirms the same strong ETag through If-Range.
 */
export const SidecarSchema = z.object({
  format: z.literal('airlock-part/1'),
  etag: z.string().min(3).max(512),
  size: z.number().int().nonnegative().nullable(),
  jobId: z.string().nullable(),
  /** Whole-object SHA-256 stated by the server (Repr-Digest / x-amz-checksum-sha256), kept because a 206 may not repeat it. */
  statedSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
});
export type Sidecar = z.infer<typeof SidecarSchema>;

export const sidecarPath = (part: string): string => `${part}.json`;

/** Our own sidecar is a few hundred bytes; a bigger one was not written by us. */
const SIDECAR_MAX_BYTES = 64 * 1024;

/**
 * The sidecar, or undefined when it is missing or unusable (then the part is not trusted). It sits
 * in the user's out folder: a regular file only, opened non-blocking (a FIFO or /dev/zero there is
 * refused, never waited on or read forever), bounded before reading.
 */
export async function readSidecar(part: string): Promise<Sidecar | undefined> {
  try {
    const bytes = await readRegularFileIfExists(sidecarPath(part), { maxBytes: SIDECAR_MAX_BYTES, refuse: (why) => new Error(why) });
    if (bytes === null) return undefined;
    const parsed = SidecarSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function writeSidecar(part: string, s: Sidecar): Promise<void> {
  await atomicWriteFile(sidecarPath(part), JSON.stringify(s) + '\n');
}

/** Bytes already in the part, 0 when there is none. */
export async function partSize(part: string): Promise<number> {
  try {
    return (await stat(part)).size;
  } catch {
    return 0;
  }
}

/** Forget a partial download: the part and its sidecar. */
export async function removePart(part: string): Promise<void> {
  await rm(part, { force: true });
  await rm(sidecarPath(part), { force: true });
}
