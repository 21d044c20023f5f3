/**
 * Kubernetes Events (core/v1) about the objects Bosun manages, shown by `kubectl describe`.
 *
 * Level-based reconcilers repeat themselves, so the same event would be written again on every
 * pass. Like client-go's recorder, a repeat of an event (same object, type, reason and message)
 * bumps the `count` and `lastTimestamp` of the event already written instead of adding one.
 * Recording is best effort: a failure is reported to `onError` and never fails a reconcile.
 */
import { hostname } from 'node:os';
import type { KubeObject } from '../apis/meta.js';
import { collectionPath, type KubeClient, objectPath } from './client.js';
import { type Clock, type Random, systemClock } from './clock.js';
import { formatTime } from './conditions.js';
import { isNotFound } from './errors.js';

export const EventType = { Normal: 'Normal', Warning: 'Warning' } as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export interface EventRecorderOptions {
  client: KubeClient;
  /** `source.component` and `reportingComponent`. */
  component?: string;
  /** `reportingInstance`, usually the host or pod name. */
  instance?: string;
  clock?: Clock;
  random?: Random;
  /** How many distinct recent events to remember for counting repeats. */
  memory?: number;
  onError?: (error: unknown) => void;
}

interface Written {
  namespace: string;
  name: string;
  count: number;
}

const eventsResource = { group: '', version: 'v1', plural: 'events', namespaced: true };
/** The API server rejects longer messages. */
const maxMessageLength = 1024;

export class EventRecorder {
  private readonly client: KubeClient;
  private readonly component: string;
  private readonly instance: string;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly memory: number;
  private readonly onError: (error: unknown) => void;
  private readonly written = new Map<string, Written>();

  constructor(opts: EventRecorderOptions) {
    this.client = opts.client;
    this.component = opts.component ?? 'bosun';
    this.instance = opts.instance ?? hostname();
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.memory = opts.memory ?? 4096;
    this.onError = opts.onError ?? (() => {});
  }

  normal(obj: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(obj, EventType.Normal, reason, message);
  }

  warning(obj: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(obj, EventType.Warning, reason, message);
  }

  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const text = message.length > maxMessageLength ? `${message.slice(0, maxMessageLength - 3)}...` : message;
    const key = JSON.stringify([
      obj.metadata?.uid ?? '',
      obj.kind,
      obj.metadata?.namespace,
      obj.metadata?.name,
      type,
      reason,
      text,
    ]);
    const now = formatTime(this.clock.now());
    try {
      const previous = this.written.get(key);
      if (previous) {
        try {
          await this.client.request({
            method: 'PATCH',
            path: objectPath(eventsResource, previous.name, previous.namespace),
            body: { count: previous.count + 1, lastTimestamp: now },
            contentType: 'application/merge-patch+json',
          });
          this.remember(key, { ...previous, count: previous.count + 1 });
          return;
        } catch (err) {
          // Events expire (an hour by default); then a new one is written.
          if (!isNotFound(err)) throw err;
        }
      }
      const event = this.newEvent(obj, type, reason, text, now);
      await this.client.request({
        method: 'POST',
        path: collectionPath(eventsResource, event.metadata.namespace),
        body: event,
      });
      this.remember(key, { namespace: event.metadata.namespace, name: event.metadata.name, count: 1 });
    } catch (err) {
      this.onError(err);
    }
  }

  private remember(key: string, written: Written): void {
    // A Map iterates in insertion order: re-inserting marks the entry as the most recent.
    this.written.delete(key);
    this.written.set(key, written);
    if (this.written.size > this.memory) {
      const oldest = this.written.keys().next().value;
      if (oldest !== undefined) this.written.delete(oldest);
    }
  }

  private newEvent(obj: KubeObject, type: EventType, reason: string, message: string, now: string) {
    const objectName = obj.metadata?.name ?? 'unknown';
    // Cluster-scoped objects' events go to `default`, as kubectl and client-go expect.
    const namespace = obj.metadata?.namespace || 'default';
    const suffix = `${this.clock.now().toString(16)}${Math.floor(this.random() * 0x10000)
      .toString(16)
      .padStart(4, '0')}`;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${objectName.slice(0, 200)}.${suffix}`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata?.name,
        namespace: obj.metadata?.namespace,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      type,
      reason,
      message,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}
