/** src/emulator — a local stand-in of the service's API (docs/DESIGN.md). */
export { createEmulator, type Emulator } from './app.js';
export { startEmulator, type StartOptions, type RunningEmulator } from './server.js';
export type { EmulatorOptions } from './context.js';
export { DEFAULT_FAULTS, FaultsSchema, type Faults, type FaultsInput, type FaultsPatch } from './faults.js';
export { defaultSites, packageRoot, type SiteConfig } from './sites.js';
export type { EmulatorState, ObjectRequestRecord, ApiRequestRecord } from './state.js';
