/**
 * Per-route circuit breakers, per instance (state is not shared between instances: each learns
 * on its own within `failures` requests, and a shared breaker would add a dependency call to every
 * attempt). A route is closed (tried) until `failures` attempts in a row failed with an error
 * another route could fix; it is then open (skipped, costing nothing) for `cooldownMs`; after that
 * one request probes it (half-open) while the others still skip it: a success closes it, a failure
 * opens it for another cool-down.
 */

import type { GatewayError } from "../errors/gateway-error.js";

export interface BreakerPolicy {
  /** Consecutive fixable failures that open a route's breaker. */
  failures: number;
  cooldownMs: number;
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = { failures: 5, cooldownMs: 30_000 };

export type BreakerState = "closed" | "open" | "half-open";

interface RouteHealth {
  consecutiveFailures: number;
  /** performance.now() time before which the route is skipped; 0: closed. */
  openUntil: number;
  /** A probe is out (half-open): other requests keep skipping the route until it reports. */
  probing: boolean;
  /** The failure that last counted, told to callers while the route is skipped. */
  lastFailure?: GatewayError;
}

/** At most this many routes are tracked; a catalog is far smaller, so this only bounds memory. */
const MAX_ROUTES = 10_000;

export class CircuitBreakers {
  private readonly routes = new Map<string, RouteHealth>();

  constructor(
    private readonly policy: BreakerPolicy,
    private readonly now: () => number = () => performance.now(),
  ) {}

  state(route: string): BreakerState {
    const health = this.routes.get(route);
    if (!health || health.openUntil === 0) return "closed";
    if (health.probing || this.now() < health.openUntil) return "open";
    return "half-open";
  }

  /**
   * true: try the route now. A half-open route lets exactly one caller through (the probe) until
   * it reports its outcome.
   */
  tryAcquire(route: string): boolean {
    const health = this.routes.get(route);
    if (!health || health.openUntil === 0) return true;
    if (health.probing || this.now() < health.openUntil) return false;
    health.probing = true;
    return true;
  }

  /** When a skipped route will take a probe again (performance.now() time), for Retry-After. */
  reopensAt(route: string): number | undefined {
    const health = this.routes.get(route);
    return health && health.openUntil !== 0 ? health.openUntil : undefined;
  }

  recordSuccess(route: string): void {
    const health = this.routes.get(route);
    if (!health) return;
    health.consecutiveFailures = 0;
    health.openUntil = 0;
    health.probing = false;
  }

  /** The failure that opened (or last kept open) the route's breaker. */
  lastFailure(route: string): GatewayError | undefined {
    return this.routes.get(route)?.lastFailure;
  }

  recordFailure(route: string, error?: GatewayError): void {
    let health = this.routes.get(route);
    if (!health) {
      if (this.routes.size >= MAX_ROUTES) this.routes.clear();
      health = { consecutiveFailures: 0, openUntil: 0, probing: false };
      this.routes.set(route, health);
    }
    health.consecutiveFailures++;
    health.lastFailure = error;
    if (health.probing || health.consecutiveFailures >= this.policy.failures) {
      health.openUntil = this.now() + this.policy.cooldownMs;
      health.probing = false;
    }
  }

  /** The attempt ended without telling anything about the route (the client left): free the probe. */
  release(route: string): void {
    const health = this.routes.get(route);
    if (health) health.probing = false;
  }
}
