/**
 * Request limits are {@link SharedLimiter}s (shared/shared-state.ts): rate-limiter-flexible's, in
 * this process with one instance and in Redis with several, so a budget spent on one instance is
 * spent on all of them.
 */
export type { RateLimit as RateLimitConfig, SharedLimiter as RateLimiter } from "../shared/shared-state";
