import { UsageError } from '../../errors.js';
import { MAX_VOLUMES, headerSize } from './format.js';

const MiB = 1024 * 1024;
/**
 * Media presets: each the largest whole number of MiB that fits the medium's file with room to spare.
 * fat32: a FAT32 file ends at 4 GiB − 1; 4,000 MiB leaves 96 MiB. dvd: a single-layer DVD holds
 * 4,707,319,808 bytes; 4,482 MiB (4,699,717,632) stays below the advertised 4.7 GB and leaves the
 * file system its room. bd25: 25,025,314,816 bytes; 23,841 MiB (24,999,149,568) stays below 25 GB.
 */
export const SPLIT_PRESETS: Readonly<Record<string, number>> = { fat32: 4000 * MiB, dvd: 4482 * MiB, bd25: 23841 * MiB };
/** Below this a volume is mostly header. */
export const MIN_SPLIT = 4096;

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  m: MiB,
  g: 1024 * MiB,
  kib: 1024,
  mib: MiB,
  gib: 1024 * MiB,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
};

/** `--split SIZE`: a preset, or a number with an optional unit (K/M/G and KiB/MiB/GiB: powers of 1024; KB/MB/GB: of 1000). */
export function parseSplitSize(text: string): number {
  const preset = SPLIT_PRESETS[text.toLowerCase()];
  if (preset !== undefined) return preset;
  const m = /^(\d{1,40})\s*([a-z]{0,3})$/i.exec(text.trim()); // any length of digits: too many is "at most", not "give bytes"
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(
      `--split ${JSON.stringify(text)}: give bytes with an optional unit (4000MiB, 700M, 4GB) or a preset (${Object.keys(SPLIT_PRESETS).join(', ')})`,
      { subject: '--split' },
    );
  }
  const bytes = Number(m[1]) * unit;
  if (!Number.isSafeInteger(bytes))
    throw new UsageError(`--split ${JSON.stringify(text)}: a volume can be at most ${Number.MAX_SAFE_INTEGER} bytes`, { subject: '--split' });
  if (bytes < MIN_SPLIT) throw new UsageError(`--split ${JSON.stringify(text)}: a volume must be at least ${MIN_SPLIT} bytes`, { subject: '--split' });
  return bytes;
}

export interface VolumePlan {
  count: number;
  header: number;
  payload: number;
  sizes: number[];
}

/**
 * How a package of `size` bytes splits into volumes of at most `split` bytes each, headers
 * included (pure). Every header is the same size, which grows with the count (the table lists
 * every volume), so the count is the smallest c whose payloads fit: ceil(size / (split − header(c))) ≤ c,
 * and at that c the two are equal.
 */
export function planVolumes(size: number, split: number, signed: boolean): VolumePlan {
  for (let c = 1; c <= MAX_VOLUMES; c++) {
    const header = headerSize(c, signed);
    const payload = split - header;
    if (payload < header) break; // smaller volumes would be mostly header
    const need = Math.ceil(size / payload);
    if (need <= c) {
      const sizes = Array.from({ length: need }, (_, i) => (i < need - 1 ? payload : size - payload * (need - 1)));
      return { count: need, header, payload, sizes };
    }
  }
  throw new UsageError(`a package of ${size} bytes does not fit in ${MAX_VOLUMES} volumes of ${split} bytes; choose a larger --split`, { subject: '--split' });
}
