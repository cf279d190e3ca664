/** src/fleet — a replica following a mirror's rollouts (`airlock serve --follow`, fleet following). */
export { Follower, targetOf, type FollowOptions, type FollowStatus, type FollowTarget } from './follow.js';
export { followToken } from './token.js';
