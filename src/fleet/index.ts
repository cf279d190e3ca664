/** src/fleet — a replica following a mirror's rollouts (`airlock serve --follow`, fleet following). */
export { Follower, type FollowOptions } from './follow.js';
export { targetOf, type FollowTarget } from './target.js';
export type { FollowStatus } from './status.js';
export { followToken } from './token.js';
