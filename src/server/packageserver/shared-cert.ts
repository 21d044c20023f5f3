/**
 * Keeps the shared serving certificate (cert-secret.ts) and the APIService's `caBundle` in step,
 * for a manager whose replicas all serve the PackageManifest API behind one Service.
 *
 * Every replica watches the Secret and serves what it holds, swapping certificates from the next
 * connection on. Only the replica allowed to write (the Lease holder, through the election's
 * write gate) creates the Secret, rotates it, and writes the APIService; it writes the APIService
 * only when it does not already trust the Secret's CA or points elsewhere, so replicas that agree
 * leave its resourceVersion alone. A rotation first makes the APIService trust the new CA beside
 * the old one, then replaces the Secret (naming the resourceVersion read): replicas still serving
 * the old certificate and those already serving the new one are both accepted, with no gap.
 */
import type { Logger } from 'pino';
import type { KubeObject, ResourceType } from '../../apis/meta.js';
import { Applier } from '../../kube/apply.js';
import type { KubeClient } from '../../kube/client.js';
import type { Clock, TimerHandle } from '../../kube/clock.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/errors.js';
import { createInformer } from '../../kube/informer.js';
import {
  issueServingCertificate,
  type IssuedCertificate,
  type ServingCertificate,
} from '../../install/certificates.js';
import {
  caBundleFor,
  certAction,
  type CertSecret,
  certSecret,
  CertSecretName,
  rotationBundle,
} from './cert-secret.js';
import { APIServiceName } from './register.js';

export interface SharedCertOptions {
  /** Reads and the Secret's watch. */
  client: KubeClient;
  /** Writes: refused by the API client while this replica may not write (the election's gate). */
  writer: KubeClient;
  /** Whether this replica is the one that writes (holds the Lease, or runs alone). */
  canWrite: () => boolean;
  namespace: string;
  hosts: readonly string[];
  /** The APIService (and what goes with it) trusting `caBundlePEM`; the APIService comes first. */
  registration: (caBundlePEM: string) => KubeObject[];
  clock: Clock;
  log: Logger;
  /** Told each certificate to serve, the first one included. */
  onCertificate: (cert: ServingCertificate) => void;
  issue?: (now: number) => Promise<IssuedCertificate>;
  /** How the registration is written; default server-side apply through `writer`. */
  apply?: (obj: KubeObject) => Promise<unknown>;
  /** Calls `changed` whenever the Secret changes; default a watch of it through `client`. */
  watch?: (changed: () => void) => { stop(): Promise<void> };
  /** Longest wait between two looks at the Secret (default a minute; 2 s while there is none). */
  resyncMs?: number;
}

export interface SharedCert {
  /** Resolves with the first certificate to serve. */
  first: Promise<ServingCertificate>;
  /** Looks at the Secret now (what an event or the timer does). */
  sync(): Promise<void>;
  /** When the certificate served is due for rotation (clock milliseconds; NaN before the first). */
  rotateAt(): number;
  stop(): Promise<void>;
}

interface LiveAPIService {
  metadata?: { labels?: Record<string, string> };
  spec?: { caBundle?: string; service?: { name?: string; namespace?: string; port?: number } };
}

const SecretResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};

export function startSharedCert(o: SharedCertOptions): SharedCert {
  const secretPath = `/api/v1/namespaces/${o.namespace}/secrets/${CertSecretName}`;
  const apiServicePath = `/apis/apiregistration.k8s.io/v1/apiservices/${APIServiceName}`;
  const apply = o.apply ?? ((obj: KubeObject) => new Applier(o.writer).apply(obj));
  const issue = o.issue ?? ((now: number) => issueServingCertificate({ hosts: o.hosts, now }));
  const resyncMs = o.resyncMs ?? 60_000;
  let served: string | undefined;
  let rotateAt = Number.NaN;
  let resolveFirst!: (c: ServingCertificate) => void;
  const first = new Promise<ServingCertificate>((r) => (resolveFirst = r));
  let stopped = false;
  let timer: TimerHandle | undefined;
  let lastWait = 0;

  const get = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await o.client.request<T>({ path });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const serve = (cert: ServingCertificate, due: number | undefined) => {
    rotateAt = due ?? Number.NaN;
    if (served === cert.certPEM) return;
    const firstOne = served === undefined;
    served = cert.certPEM;
    o.onCertificate(cert);
    resolveFirst(cert);
    if (!firstOne) o.log.info('serving the PackageManifest API with the certificate the Secret now holds');
  };

  /** Writes the registration when the live APIService does not trust `caPEM` or points elsewhere. */
  const ensureRegistration = async (caPEM: string, bundle?: string) => {
    const live = await get<LiveAPIService>(apiServicePath);
    const liveBundle = live?.spec?.caBundle
      ? Buffer.from(live.spec.caBundle, 'base64').toString()
      : undefined;
    const want = bundle ?? caBundleFor(liveBundle, caPEM);
    const [apiService] = o.registration(want);
    const wanted = (apiService as { spec?: LiveAPIService['spec'] }).spec?.service;
    const same =
      live !== undefined &&
      liveBundle === want &&
      live.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'bosun' &&
      live.spec?.service?.name === wanted?.name &&
      live.spec?.service?.namespace === wanted?.namespace &&
      live.spec?.service?.port === wanted?.port;
    if (same) return;
    for (const obj of o.registration(want)) await apply(obj);
    o.log.info({ apiService: APIServiceName }, 'PackageManifest APIService registered with the shared CA');
  };

  const writeSecret = async (cert: ServingCertificate, existing: CertSecret | undefined) => {
    const body = certSecret(o.namespace, cert, existing?.metadata?.resourceVersion);
    if (existing) await o.writer.request({ method: 'PUT', path: secretPath, body });
    else
      await o.writer.request({
        method: 'POST',
        path: `/api/v1/namespaces/${o.namespace}/secrets`,
        body,
      });
  };

  const once = async () => {
    const secret = await get<CertSecret>(secretPath);
    const now = o.clock.now();
    const action = certAction(secret, o.hosts, now);
    if (o.canWrite()) {
      if (action.kind === 'missing' || action.due) {
        const why = action.kind === 'missing' ? action.reason : action.due;
        const next = await issue(now);
        const current = action.kind === 'serve' ? action.certificate.caPEM : undefined;
        // The aggregator trusts the new CA before any replica can serve a certificate it signed.
        await ensureRegistration(next.caPEM, rotationBundle(next.caPEM, current));
        try {
          await writeSecret(next, secret);
        } catch (err) {
          // Another replica wrote the Secret since it was read: serve what it wrote.
          if (isConflict(err) || isAlreadyExists(err)) return once();
          throw err;
        }
        o.log.info(
          {
            secret: `${o.namespace}/${CertSecretName}`,
            why,
            rotateAt: new Date(next.rotateAt).toISOString(),
          },
          'PackageManifest API serving certificate issued',
        );
        serve(next, next.rotateAt);
        return;
      }
      await ensureRegistration(action.certificate.caPEM);
    }
    if (action.kind === 'serve') serve(action.certificate, action.rotateAt);
    else if (served === undefined && now - lastWait >= 10_000) {
      lastWait = now;
      o.log.info(
        { why: action.reason },
        'waiting for the leader to issue the PackageManifest API certificate',
      );
    }
  };

  // One look at a time; a request meanwhile runs one more look after it.
  let running: Promise<void> | undefined;
  let again = false;
  const sync = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await once();
        } catch (err) {
          o.log.warn({ err }, 'the PackageManifest API certificate could not be checked, retrying');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
      schedule();
    });
    return running;
  };
  const schedule = () => {
    if (stopped) return;
    timer?.cancel();
    timer = o.clock.setTimer(served === undefined ? Math.min(2_000, resyncMs) : resyncMs, () => void sync());
  };

  const watch = (o.watch ?? watchSecret(o))(() => void sync());
  void sync();

  return {
    first,
    sync,
    rotateAt: () => rotateAt,
    stop: async () => {
      stopped = true;
      timer?.cancel();
      await watch.stop();
      await running;
    },
  };
}

/** A watch of the one Secret (by name), through the informer's hardened list-then-watch. */
function watchSecret(o: SharedCertOptions) {
  return (changed: () => void) => {
    const informer = createInformer<CertSecret>(o.client, SecretResource, {
      namespace: o.namespace,
      fieldSelector: `metadata.name=${CertSecretName}`,
      // Only that a change happened matters: each look reads the Secret itself.
      transform: (s) => ({ apiVersion: s.apiVersion, kind: s.kind, metadata: s.metadata }) as CertSecret,
      onError: (err, during) => o.log.debug({ err, during }, 'watch of the certificate Secret, retrying'),
    });
    informer.on({ add: changed, update: changed, delete: changed });
    informer.start();
    return { stop: () => informer.stop() };
  };
}
