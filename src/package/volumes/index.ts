/** Packages split into volumes for media: format.ts, plan.ts, write.ts, read.ts. */
export { MAX_VOLUMES, volumeName, parseVolumeName, isVolumeHead, type VolumeTable } from './format.js';
export { parseSplitSize, planVolumes, SPLIT_PRESETS, MIN_SPLIT, type VolumePlan } from './plan.js';
export { splitPackage, type SplitResult } from './write.js';
export { openVolumes, isVolume, describeVolume, type VolumeInfo, MAX_VOLUME_DIRS, type VolumeSet, type OpenVolumesOptions } from './read.js';
