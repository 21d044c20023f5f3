/**
 * The PackageManifest API as the manager runs it: a serving certificate for the Service's
 * names, the HTTPS server, its registration with the aggregator, and the certificate's rotation
 * a day before it expires (the new CA goes into the APIService's `caBundle` and the server
 * serves the new certificate from the next connection on).
 *
 * Two ways to run it. Alone (`bosun start`, a manager beside the cluster): the manager issues its
 * own certificate, writes the Service, its EndpointSlice naming its own address and the
 * APIService, and removes them when it stops. As one of several replicas behind deploy/'s Service
 * (`shared`): every replica serves the one certificate kept in a Secret (shared-cert.ts), the
 * Lease holder alone writes that Secret and the APIService, and stopping a replica removes
 * nothing, since the others go on serving.
 */
import type { Logger } from 'pino';
import type { Applier } from '../../kube/apply.js';
import type { KubeClient } from '../../kube/client.js';
import type { Clock } from '../../kube/clock.js';
import { issueServingCertificate, servingHostnames } from '../../install/certificates.js';
import type { PackageIndex } from '../../packages/index.js';
import { readRequestHeaderConfig, Reviewer } from './auth.js';
import { listenPlan } from './listen.js';
import { register, ServiceName, sharedRegistrationObjects, unregister } from './register.js';
import { startSharedCert } from './shared-cert.js';
import { UserError } from '../../util/errors.js';
import { type RunningPackageServer, startPackageServer } from './server.js';

export interface PackageApiOptions {
  /**
   * `host:port` to serve at: bound as given. The API server dials that host, or for `0.0.0.0` the
   * host's first non-loopback IPv4 address; a loopback host is refused (see listen.ts).
   */
  address: string;
  namespace: string;
  index: PackageIndex;
  client: KubeClient;
  applier: Applier;
  clock: Clock;
  log: Logger;
  /** Reviews shared with other servers of the manager (one cache, one rate limit); else its own. */
  reviewer?: Reviewer;
  /** Serve as one of several replicas behind the Service `bosun-packageserver` (see above). */
  shared?: SharedServing;
}

export interface SharedServing {
  /** The port of the Service, which the APIService names. */
  servicePort: number;
  /** Writes pass only while this replica may write (the election's gate). */
  writer: KubeClient;
  canWrite: () => boolean;
}

export interface RunningPackageApi {
  url: string;
  port: number;
  /** When the serving certificate is next replaced (clock milliseconds). */
  rotateAt(): number;
  /** Replaces the certificate now (what the timer does a day before expiry). */
  rotate(): Promise<void>;
  stop(): Promise<void>;
}

/** Longest single wait of the rotation timer (Node timers hold at most about 24 days). */
const maxTimerMs = 24 * 3_600_000;

export async function startPackageApi(opts: PackageApiOptions): Promise<RunningPackageApi> {
  const plan = listenPlan(opts.address);
  if (!plan.ok) throw new UserError(plan.error);
  const hosts = [...servingHostnames(ServiceName, opts.namespace), 'localhost'];
  if (opts.shared) return startSharedPackageApi(opts, opts.shared, plan.value.bind, hosts);
  const { bind, advertise } = plan.value;
  let cert = await issueServingCertificate({ hosts, now: opts.clock.now() });
  const requestHeader = await readRequestHeaderConfig(opts.client);
  if (!requestHeader)
    opts.log.warn(
      'the cluster has no front-proxy settings (extension-apiserver-authentication): only bearer tokens are accepted',
    );
  const server = await startPackageServer({
    address: `${bind.host}:${bind.port}`,
    index: opts.index,
    reviewer: opts.reviewer ?? new Reviewer(opts.client, () => opts.clock.now()),
    tls: cert,
    requestHeader,
    log: opts.log,
    now: () => opts.clock.now(),
  });
  const registration = (caPEM: string) =>
    register(opts.applier, { namespace: opts.namespace, ip: advertise, port: server.port, caPEM });
  try {
    await registration(cert.caPEM);
  } catch (err) {
    await server.close();
    throw err;
  }
  opts.log.info(
    { url: server.url, advertised: `${advertise}:${server.port}` },
    'serving the PackageManifest API (packages.operators.coreos.com/v1)',
  );

  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    const wait = Math.max(0, Math.min(cert.rotateAt - opts.clock.now(), maxTimerMs));
    timer = setTimeout(() => {
      if (opts.clock.now() < cert.rotateAt) return schedule();
      rotate().catch((err: unknown) => {
        opts.log.warn({ err }, 'serving certificate not rotated, retrying in a minute');
        timer = setTimeout(schedule, 60_000);
        timer.unref();
      });
    }, wait);
    timer.unref();
  };
  const rotate = async () => {
    clearTimeout(timer);
    const next = await issueServingCertificate({ hosts, now: opts.clock.now() });
    // The aggregator is told to trust both CAs before the new certificate is served, so that
    // connections made with either certificate are accepted while the change goes round.
    await registration(next.caPEM + cert.caPEM);
    server.setTls(next);
    cert = next;
    opts.log.info({ rotateAt: new Date(next.rotateAt).toISOString() }, 'serving certificate rotated');
    schedule();
  };
  schedule();

  return {
    url: server.url,
    port: server.port,
    rotateAt: () => cert.rotateAt,
    rotate,
    stop: async () => {
      clearTimeout(timer);
      await unregister(opts.client, opts.namespace).catch((err: unknown) =>
        opts.log.warn({ err }, 'PackageManifest APIService not removed'),
      );
      await server.close();
    },
  };
}

/** One replica of several behind the Service: the certificate comes from the shared Secret. */
async function startSharedPackageApi(
  opts: PackageApiOptions,
  shared: SharedServing,
  bind: { host: string; port: number },
  hosts: readonly string[],
): Promise<RunningPackageApi> {
  let server: RunningPackageServer | undefined;
  const cert = startSharedCert({
    client: opts.client,
    writer: shared.writer,
    canWrite: shared.canWrite,
    namespace: opts.namespace,
    hosts,
    registration: (caPEM) =>
      sharedRegistrationObjects({ namespace: opts.namespace, servicePort: shared.servicePort, caPEM }),
    clock: opts.clock,
    log: opts.log,
    onCertificate: (c) => server?.setTls(c),
  });
  try {
    const [tls, requestHeader] = await Promise.all([cert.first, readRequestHeaderConfig(opts.client)]);
    if (!requestHeader)
      opts.log.warn(
        'the cluster has no front-proxy settings (extension-apiserver-authentication): only bearer tokens are accepted',
      );
    server = await startPackageServer({
      address: `${bind.host}:${bind.port}`,
      index: opts.index,
      reviewer: opts.reviewer ?? new Reviewer(opts.client, () => opts.clock.now()),
      tls,
      requestHeader,
      log: opts.log,
      now: () => opts.clock.now(),
    });
  } catch (err) {
    await cert.stop();
    throw err;
  }
  opts.log.info(
    { url: server.url, service: `${opts.namespace}/${ServiceName}:${shared.servicePort}` },
    'serving the PackageManifest API (packages.operators.coreos.com/v1) behind its Service',
  );
  const running = server;
  return {
    url: running.url,
    port: running.port,
    rotateAt: () => cert.rotateAt(),
    rotate: () => cert.sync(),
    // The APIService stays: the other replicas serve it.
    stop: async () => {
      await cert.stop();
      await running.close();
    },
  };
}
