/**
 * The manager's Prometheus metrics (prom-client), behind the Metrics interface controllers use.
 * One Registry per manager, so tests that run several managers in one process do not collide.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
// The port is the controllers' (they declare what they reach the world through); this is its adapter.
import type { Metrics } from '../controllers/context.js';

export interface ManagerMetrics {
  registry: Registry;
  metrics: Metrics;
  /** Reports a controller's queue depth whenever /metrics is scraped. */
  watchQueue(controller: string, depth: () => number): void;
  /** Reports whether this manager leads (runs the controllers) whenever /metrics is scraped. */
  watchLeader(isLeader: () => boolean): void;
}

export function createMetrics(): ManagerMetrics {
  const registry = new Registry();
  // Process figures (RSS, heap, event loop lag) under the usual names.
  collectDefaultMetrics({ register: registry });
  const reconciles = new Counter({
    name: 'bosun_reconcile_total',
    help: 'Finished reconciles by controller and outcome (success, requeue, retry)',
    labelNames: ['controller', 'outcome'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'bosun_reconcile_errors_total',
    help: 'Reconciles that failed (and are retried) by controller',
    labelNames: ['controller'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'bosun_reconcile_duration_seconds',
    help: 'How long one reconcile took, by controller',
    labelNames: ['controller'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const resolution = new Histogram({
    name: 'bosun_resolution_duration_seconds',
    help: "How long resolving one namespace's Subscriptions took",
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const queues = new Map<string, () => number>();
  new Gauge({
    name: 'bosun_workqueue_depth',
    help: 'Keys waiting in each controller work queue',
    labelNames: ['controller'] as const,
    registers: [registry],
    collect() {
      for (const [controller, depth] of queues) this.set({ controller }, depth());
    },
  });
  let leads: () => boolean = () => true;
  new Gauge({
    name: 'bosun_leader',
    help: 'Whether this manager holds the leader Lease and runs the controllers (1) or is a standby serving reads (0)',
    registers: [registry],
    collect() {
      this.set(leads() ? 1 : 0);
    },
  });
  return {
    registry,
    watchQueue: (controller, depth) => queues.set(controller, depth),
    watchLeader: (isLeader) => (leads = isLeader),
    metrics: {
      reconciled(controller, outcome, seconds) {
        reconciles.inc({ controller, outcome });
        if (outcome === 'retry') errors.inc({ controller });
        duration.observe({ controller }, seconds);
      },
      resolution(seconds) {
        resolution.observe(seconds);
      },
    },
  };
}
