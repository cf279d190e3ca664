import type { AirlockServer } from '../serve/index.js';

/** What a follower drives: a running server, seen through the few calls a rollout needs. */
export interface FollowTarget {
  /** The version served now. */
  current(): string | null;
  preload(label: string): Promise<void>;
  /** Re-read the store's active pointer and swap (the server's SIGHUP path). */
  recheck(): Promise<void>;
  /** Swap the pre-loaded version in at once, ahead of the store's pointer (server.adopt); then `adopted`. */
  adopt?(label: string): boolean;
  adopted?(): void;
}

/** A server of src/serve as what a follower drives. */
export function targetOf(srv: AirlockServer): FollowTarget {
  return {
    current: () => srv.current().version,
    preload: (l) => srv.preload(l),
    recheck: () => srv.recheck(),
    adopt: (l) => srv.adopt(l),
    adopted: () => srv.adopted(),
  };
}
