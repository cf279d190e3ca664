import type { FleetAnswer } from '../mirror/index.js';

/** What a follower knows, as /_airlock/ready shows it. */
export interface FollowStatus {
  mirror: string;
  replica: string;
  /** ok: in touch; unreachable: the last poll(s) failed (still serving what it has). */
  mirror_state: 'starting' | 'ok' | 'unreachable';
  lastContactAt: string | null;
  error: string | null;
  announced: { version: string | null; phase: FleetAnswer['phase'] } | null;
  preparing: string | null;
  prepared: string | null;
  downloadError: string | null;
  refused: { version: string; reason: string } | null;
  switchAt: string | null;
  lastSwitch: { version: string; at: string; atMs: number } | null;
}

/** The status of a follower that has not polled yet. */
export function startingStatus(mirror: string, replica: string): FollowStatus {
  return {
    mirror,
    replica,
    mirror_state: 'starting',
    lastContactAt: null,
    error: null,
    announced: null,
    preparing: null,
    prepared: null,
    downloadError: null,
    refused: null,
    switchAt: null,
    lastSwitch: null,
  };
}
