import { z } from 'zod';

/**
 * Readers are tolerant (the service's API as published): a field airlock can do
 * without reads as absent (undefined) when it is missing, `null`, or of a shape we do not understand — a
 * newer or sloppier service must not stop a fetch over a field that changes nothing. Only what
 * airlock truly needs is required, and that stays strict.
 */
export function optional<T extends z.ZodType>(schema: T) {
  return schema
    .nullish()
    .catch(undefined)
    .transform((v): z.output<T> | undefined => v ?? undefined);
}

/** Ids are printed and put into URL paths and file names: printable ASCII, no spaces, bounded. */
export const IdSchema = z.string().regex(/^[!-~]{1,256}$/, 'expected 1 to 256 printable ASCII characters without spaces');

/** A time stamp as the service sends it (RFC 3339); kept as text, read with Date by its users. */
export const TimeSchema = z.string().min(1).max(64);
