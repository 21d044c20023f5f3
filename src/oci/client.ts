/**
 * A client of the OCI distribution API (the registry HTTP API Docker's registry, Quay, GHCR, ECR,
 * Harbor and Zot serve), on undici's `fetch`: manifests and indexes by tag or digest, blobs
 * streamed and verified against their digest, uploads monolithic or in chunks, and the
 * authentication registries ask for (anonymous, Basic, or Docker's bearer-token flow).
 *
 * Everything a registry sends is untrusted: a manifest is read only up to MaxManifestBytes and
 * checked against the digest it was asked by (or the one the registry names); a blob is handed on
 * only through a stream that fails unless the bytes match the descriptor's digest and size; error
 * bodies and tokens are read within small bounds. Every failure names the registry, repository
 * and what was being done.
 */
import { Readable } from 'node:stream';
import type { Agent, Response } from 'undici';
import {
  type Challenge,
  type CredentialEntry,
  type CredentialStore,
  credentialFor,
  emptyCredentials,
  parseChallenges,
  repositoryScope,
} from './auth.js';
import { digestError, digestWithAlgorithmOf, sha256Digest, verifyingStream } from './digest.js';
import { DigestMismatchError, OciError, type OciErrorWhere, registryErrorDetails } from './errors.js';
import {
  type ImageIndex,
  type ImageManifest,
  MaxManifestBytes,
  type Descriptor,
  type Manifest,
  type Platform,
  DefaultPlatform,
  parseManifest,
  selectPlatform,
} from './manifest.js';
import { manifestAccept } from './media-types.js';
import { type ImageReference, apiHost, formatReference, manifestReference } from './reference.js';
import {
  fetchFollowing,
  isNotTls,
  makeAgent,
  readBounded,
  schemesFor,
  type Timeouts,
  type TransportOptions,
  unreachable,
  urlAllowed,
} from './transport.js';

export interface ClientOptions extends TransportOptions {
  /** Credentials by registry (from pull Secrets or ~/.docker/config.json); none: anonymous. */
  credentials?: CredentialStore;
  /** The clock for token expiry. */
  now?: () => number;
}

type Action = 'pull' | 'push';

/** What a request is for: the repository it touches and what it does there (the token's scope). */
interface Target {
  registry: string;
  repository: string;
  actions: Action[];
  /** Further scopes (a cross-repository mount needs pull on the source). */
  scopes?: string[];
}

interface SendInit {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH';
  headers?: Record<string, string>;
  /** Bytes, or a stream opened afresh for each attempt (a 401 retry sends the body again). */
  body?: Uint8Array | (() => Promise<Readable>);
  /** A request whose body streams (blob downloads) has no overall deadline, only an idle timeout. */
  streaming?: boolean;
}

/** A manifest or index as fetched: the bytes its digest covers, the digest, and what they say. */
export interface FetchedManifest {
  manifest: Manifest;
  digest: string;
  bytes: Buffer;
  mediaType: string;
}

/** The image manifest of one platform, and the index it was chosen from when there was one. */
export interface ResolvedImage {
  /** The image pinned to the image manifest's digest. */
  ref: ImageReference;
  manifest: ImageManifest;
  digest: string;
  bytes: Buffer;
  index?: { digest: string; manifest: ImageIndex };
}

export interface BlobSource {
  digest: string;
  size: number;
  /** The bytes; a file is read in chunks of `chunkSize` by pushBlobFile. */
  data: Uint8Array;
}

export type PushOutcome = 'present' | 'mounted' | 'uploaded';

/** Token responses and error bodies are small; a registry sending more is refused. */
const MaxTokenBytes = 1024 * 1024;
const MaxErrorBytes = 64 * 1024;
/** Tokens without `expires_in` last 60 s (Docker's token spec); renewed this long before they end. */
const DefaultTokenSeconds = 60;
const TokenMarginMs = 5_000;

export class RegistryClient {
  private readonly agent: Agent;
  private readonly timeouts: Timeouts;
  private readonly insecure: readonly string[];
  private readonly credentials: CredentialStore;
  private readonly now: () => number;
  private readonly schemes = new Map<string, Promise<'https' | 'http'>>();
  /** How each registry asked to be authenticated, learnt from its first 401. */
  private readonly challenges = new Map<string, Challenge>();
  private readonly tokens = new Map<string, { token: string; until: number }>();

  constructor(opts: ClientOptions = {}) {
    ({ agent: this.agent, timeouts: this.timeouts } = makeAgent(opts));
    this.insecure = opts.insecure ?? [];
    this.credentials = opts.credentials ?? emptyCredentials;
    this.now = opts.now ?? Date.now;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  // ---- manifests ----

  /** The digest, media type and size of the manifest a tag (or digest) names, without its body. */
  async resolve(ref: ImageReference): Promise<{ digest: string; mediaType: string; size: number }> {
    const reference = manifestReference(ref);
    const what = `${formatReference(ref)}: cannot resolve ${reference}`;
    const response = await this.send(pullTarget(ref), `/v2/${ref.repository}/manifests/${reference}`, what, {
      method: 'HEAD',
      headers: { accept: manifestAccept },
    });
    if (!response.ok) throw await this.failure(response, what, ref);
    const digest = response.headers.get('docker-content-digest');
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    const size = Number(response.headers.get('content-length') ?? NaN);
    // A registry that does not name the digest on HEAD is asked for the manifest itself.
    if (digest === null || digestError(digest) !== undefined) {
      const fetched = await this.getManifest(ref);
      return { digest: fetched.digest, mediaType: fetched.mediaType, size: fetched.bytes.length };
    }
    if (ref.digest !== undefined && digest !== ref.digest)
      throw new DigestMismatchError(`${what}: the registry names the digest ${digest}`, where(ref));
    return { digest, mediaType, size: Number.isSafeInteger(size) ? size : -1 };
  }

  /**
   * The manifest or index a tag or digest names. Fetched by digest, its bytes must hash to that
   * digest; fetched by tag, to the digest the registry names in `Docker-Content-Digest`.
   */
  async getManifest(
    ref: ImageReference,
    reference: string = manifestReference(ref),
  ): Promise<FetchedManifest> {
    const at = { ...where(ref), ...(reference.includes(':') && { digest: reference }) };
    const what = `${formatReference(ref)}: cannot fetch the manifest ${reference}`;
    const response = await this.send(pullTarget(ref), `/v2/${ref.repository}/manifests/${reference}`, what, {
      method: 'GET',
      headers: { accept: manifestAccept },
    });
    if (!response.ok) throw await this.failure(response, what, ref);
    const bytes = await readBounded(response, MaxManifestBytes, what, at);
    const byDigest = !digestError(reference);
    const digest = byDigest ? digestWithAlgorithmOf(reference, bytes) : sha256Digest(bytes);
    if (byDigest && digest !== reference)
      throw new DigestMismatchError(
        `${formatReference(ref)}: the registry served a manifest with the digest ${digest} for ${reference}; it was not used`,
        at,
      );
    const named = response.headers.get('docker-content-digest');
    if (!byDigest && named !== null && named.startsWith('sha256:') && named !== digest)
      throw new DigestMismatchError(
        `${formatReference(ref)}: the registry names the digest ${named} for the manifest it served, whose digest is ${digest}; it was not used`,
        at,
      );
    const manifest = parseManifest(bytes, response.headers.get('content-type') ?? undefined, {
      ...at,
      digest,
    });
    return { manifest, digest, bytes, mediaType: manifest.mediaType };
  }

  /**
   * The image manifest for `platform` (linux/amd64 unless asked): the manifest itself when the
   * reference names one, else the platform's entry of the index it names.
   */
  async getImage(ref: ImageReference, platform: Platform = DefaultPlatform): Promise<ResolvedImage> {
    const top = await this.getManifest(ref);
    if (top.manifest.kind === 'manifest')
      return {
        ref: { ...ref, digest: top.digest },
        manifest: top.manifest,
        digest: top.digest,
        bytes: top.bytes,
      };
    let index = { digest: top.digest, manifest: top.manifest };
    // An index may name an index (rare, but allowed); two levels are followed, no more.
    for (let depth = 0; depth < 2; depth++) {
      const chosen: Descriptor = selectPlatform(index.manifest, platform, {
        ...where(ref),
        digest: index.digest,
      });
      const child = await this.getManifest(ref, chosen.digest);
      if (child.manifest.kind === 'manifest')
        return {
          ref: { ...ref, digest: child.digest },
          manifest: child.manifest,
          digest: child.digest,
          bytes: child.bytes,
          index,
        };
      index = { digest: child.digest, manifest: child.manifest };
    }
    throw new OciError(`${formatReference(ref)}: indexes nest more than two deep`, where(ref));
  }

  /** Stores a manifest under `reference` (a tag, or its digest); returns its digest. */
  async pushManifest(
    ref: ImageReference,
    bytes: Uint8Array,
    mediaType: string,
    reference: string = ref.tag ?? sha256Digest(bytes),
  ): Promise<string> {
    const digest = sha256Digest(bytes);
    const what = `${formatReference(ref)}: cannot push the manifest ${digest} as ${reference}`;
    const response = await this.send(pushTarget(ref), `/v2/${ref.repository}/manifests/${reference}`, what, {
      method: 'PUT',
      headers: { 'content-type': mediaType },
      body: bytes,
    });
    if (response.status !== 201 && response.status !== 200) throw await this.failure(response, what, ref);
    await response.body?.cancel();
    const named = response.headers.get('docker-content-digest');
    if (named !== null && named !== digest)
      throw new DigestMismatchError(`${what}: the registry stored it as ${named}`, where(ref));
    return digest;
  }

  // ---- blobs ----

  /** Whether the repository has the blob (HEAD): a push skips what is already there. */
  async hasBlob(ref: ImageReference, digest: string, actions: Action[] = ['pull']): Promise<boolean> {
    const what = `${formatReference(ref)}: cannot look for the blob ${digest}`;
    const response = await this.send(
      { registry: ref.registry, repository: ref.repository, actions },
      `/v2/${ref.repository}/blobs/${digest}`,
      what,
      { method: 'HEAD' },
    );
    if (response.status === 404) return false;
    if (!response.ok) throw await this.failure(response, what, ref);
    return true;
  }

  /**
   * The blob's bytes as a stream that ends only if they match `blob.digest` and `blob.size`; it
   * fails otherwise, and whatever was read of it must be dropped. A blob larger than `maxBytes`
   * (by its descriptor, by what the registry declares, or by what arrives) is refused.
   */
  async blobStream(ref: ImageReference, blob: Descriptor, maxBytes: number): Promise<Readable> {
    const at = { ...where(ref), digest: blob.digest };
    const bad = digestError(blob.digest);
    if (bad) throw new OciError(`${formatReference(ref)}: ${bad}`, at);
    if (blob.size > maxBytes)
      throw new OciError(
        `${formatReference(ref)}: blob ${blob.digest} is ${blob.size} bytes, past the limit of ${maxBytes}; nothing was fetched`,
        at,
      );
    const what = `${formatReference(ref)}: cannot fetch the blob ${blob.digest}`;
    const response = await this.send(pullTarget(ref), `/v2/${ref.repository}/blobs/${blob.digest}`, what, {
      method: 'GET',
      streaming: true,
    });
    if (!response.ok) throw await this.failure(response, what, ref);
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared !== blob.size) {
      await response.body?.cancel();
      throw new DigestMismatchError(
        `${formatReference(ref)}: the registry sends ${declared} bytes for the blob ${blob.digest}, whose descriptor gives ${blob.size}; nothing of it was kept`,
        at,
      );
    }
    const verifier = verifyingStream(blob, at);
    if (!response.body) {
      verifier.end();
      return verifier;
    }
    const source = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    source.on('error', (err) => verifier.destroy(unreachable(err, what, at)));
    // A reader that stops early closes the download too.
    verifier.on('close', () => source.destroy());
    source.pipe(verifier);
    return verifier;
  }

  /** The blob's verified bytes (for configs and small layers). */
  async blobBytes(ref: ImageReference, blob: Descriptor, maxBytes: number): Promise<Buffer> {
    const stream = await this.blobStream(ref, blob, maxBytes);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /**
   * Uploads a blob unless the repository has it (HEAD first). With `mountFrom`, asks the
   * registry to link it from another repository of its own instead of uploading it; with
   * `chunkSize`, uploads it in PATCH requests of that many bytes, else in one PUT.
   */
  async pushBlob(
    ref: ImageReference,
    blob: BlobSource,
    opts: { chunkSize?: number; mountFrom?: string } = {},
  ): Promise<PushOutcome> {
    const at = { ...where(ref), digest: blob.digest };
    if (blob.data.length !== blob.size || digestWithAlgorithmOf(blob.digest, blob.data) !== blob.digest)
      throw new DigestMismatchError(
        `${formatReference(ref)}: the blob to push does not match ${blob.digest}`,
        at,
      );
    if (await this.hasBlob(ref, blob.digest, ['pull', 'push'])) return 'present';
    const what = `${formatReference(ref)}: cannot push the blob ${blob.digest}`;
    const started = await this.startUpload(ref, blob.digest, what, opts.mountFrom);
    if (started.mounted) return 'mounted';
    const { target } = started;
    let location = started.location;

    const chunk = opts.chunkSize;
    if (chunk !== undefined && chunk > 0 && blob.size > chunk) {
      for (let offset = 0; offset < blob.size; offset += chunk) {
        const part = blob.data.subarray(offset, Math.min(offset + chunk, blob.size));
        const patched = await this.send(target, location.href, what, {
          method: 'PATCH',
          headers: {
            'content-type': 'application/octet-stream',
            'content-range': `${offset}-${offset + part.length - 1}`,
          },
          body: part,
        });
        if (patched.status !== 202) throw await this.failure(patched, `${what} (bytes ${offset} on)`, ref);
        await patched.body?.cancel();
        location = this.uploadLocation(patched, what, ref);
      }
      location.searchParams.set('digest', blob.digest);
      const done = await this.send(target, location.href, what, {
        method: 'PUT',
        headers: { 'content-length': '0' },
      });
      return this.uploaded(done, what, ref, blob.digest);
    }
    location.searchParams.set('digest', blob.digest);
    const put = await this.send(target, location.href, what, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: blob.data,
    });
    return this.uploaded(put, what, ref, blob.digest);
  }

  /**
   * Uploads a blob unless the repository has it, streaming its bytes from `open` (called again
   * should the upload need its body twice) in one PUT: a blob copied between registries passes
   * through in chunks, never whole in memory. The stream should verify what it yields (a
   * RegistryClient's blobStream does); the registry checks the digest too.
   */
  async pushBlobFrom(
    ref: ImageReference,
    blob: Descriptor,
    open: () => Promise<Readable>,
    opts: { mountFrom?: string } = {},
  ): Promise<PushOutcome> {
    const bad = digestError(blob.digest);
    if (bad) throw new OciError(`${formatReference(ref)}: ${bad}`, { ...where(ref), digest: blob.digest });
    if (await this.hasBlob(ref, blob.digest, ['pull', 'push'])) return 'present';
    const what = `${formatReference(ref)}: cannot push the blob ${blob.digest}`;
    const started = await this.startUpload(ref, blob.digest, what, opts.mountFrom);
    if (started.mounted) return 'mounted';
    started.location.searchParams.set('digest', blob.digest);
    const put = await this.send(started.target, started.location.href, what, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(blob.size) },
      body: open,
      // A large blob takes as long as it takes; only a stalled connection times out.
      streaming: true,
    });
    return this.uploaded(put, what, ref, blob.digest);
  }

  /** Opens an upload session (POST), or mounts the blob from `mountFrom` when the registry can. */
  private async startUpload(
    ref: ImageReference,
    digest: string,
    what: string,
    mountFrom: string | undefined,
  ): Promise<{ mounted: true } | { mounted: false; target: Target; location: URL }> {
    const target: Target = {
      ...pushTarget(ref),
      ...(mountFrom && { scopes: [repositoryScope(mountFrom, ['pull'])] }),
    };
    const start = mountFrom
      ? `/v2/${ref.repository}/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(mountFrom)}`
      : `/v2/${ref.repository}/blobs/uploads/`;
    const started = await this.send(target, start, what, {
      method: 'POST',
      headers: { 'content-length': '0' },
    });
    if (started.status === 201 && mountFrom) {
      await started.body?.cancel();
      return { mounted: true };
    }
    if (started.status !== 202) throw await this.failure(started, what, ref);
    await started.body?.cancel();
    return { mounted: false, target, location: this.uploadLocation(started, what, ref) };
  }

  private async uploaded(
    response: Response,
    what: string,
    ref: ImageReference,
    digest: string,
  ): Promise<PushOutcome> {
    if (response.status !== 201) throw await this.failure(response, what, ref);
    await response.body?.cancel();
    const named = response.headers.get('docker-content-digest');
    if (named !== null && named !== digest)
      throw new DigestMismatchError(`${what}: the registry stored it as ${named}`, { ...where(ref), digest });
    return 'uploaded';
  }

  /** Where an upload goes on: the `Location` of the last answer, relative to the registry. */
  private uploadLocation(response: Response, what: string, ref: ImageReference): URL {
    const location = response.headers.get('location');
    const url = location === null ? undefined : URL.parse(location, response.url);
    if (!url) throw new OciError(`${what}: the registry gave no upload location`, where(ref));
    return url;
  }

  // ---- requests and authentication ----

  /** The scheme to reach `registry` with: HTTPS, or HTTP where the policy allows it and HTTPS is not spoken. */
  private scheme(registry: string): Promise<'https' | 'http'> {
    let known = this.schemes.get(registry);
    if (!known) {
      known = this.probe(registry);
      this.schemes.set(registry, known);
    }
    return known;
  }

  private async probe(registry: string): Promise<'https' | 'http'> {
    const schemes = schemesFor(registry, this.insecure);
    if (schemes.length === 1) return 'https';
    try {
      const response = await fetchFollowing(
        this.agent,
        new URL(`https://${apiHost(registry)}/v2/`),
        { method: 'GET', signal: AbortSignal.timeout(this.timeouts.requestMs) },
        this.insecure,
        () => registry,
      );
      await response.response.body?.cancel();
      return 'https';
    } catch (err) {
      // Only a server that does not speak TLS at all is tried over HTTP; an untrusted
      // certificate stays an error, so a wrong CA is never "fixed" by dropping TLS.
      if (isNotTls(err)) return 'http';
      this.schemes.delete(registry); // a registry that is down now may be up on the next call
      return 'https';
    }
  }

  /**
   * Sends a request for `target`, authenticating as the registry asks: with the cached token or
   * Basic credentials when it asked before, else anonymously first, and once more after a 401
   * with what its challenge requests.
   */
  private async send(target: Target, pathOrUrl: string, what: string, init: SendInit): Promise<Response> {
    const at = { registry: target.registry, repository: target.repository };
    const base = new URL(`${await this.scheme(target.registry)}://${apiHost(target.registry)}/`);
    const url = new URL(pathOrUrl, base);
    const credential = credentialFor(this.credentials, target.registry, target.repository);
    let authorization = this.cachedAuthorization(target, credential);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { ...init.headers };
      // Credentials go only to the registry's own origin (an upload location may be elsewhere).
      if (authorization !== undefined && url.origin === base.origin) headers.authorization = authorization;
      let response: Response;
      try {
        const body = typeof init.body === 'function' ? await init.body() : init.body;
        ({ response } = await fetchFollowing(
          this.agent,
          url,
          {
            method: init.method,
            headers,
            ...(body !== undefined && { body }),
            // A streamed body is sent while the response is awaited (undici needs to be told).
            ...(body instanceof Readable && { duplex: 'half' as const }),
            ...(!init.streaming && { signal: AbortSignal.timeout(this.timeouts.requestMs) }),
          },
          this.insecure,
          () => what,
        ));
      } catch (err) {
        throw unreachable(err, what, at);
      }
      if (response.status !== 401 || attempt > 0) {
        if (response.status === 401)
          throw await this.refused(response, what, target, credential, authorization);
        return response;
      }
      const header = response.headers.get('www-authenticate') ?? '';
      const challenges = parseChallenges(header);
      const challenge =
        challenges.find((c) => c.scheme === 'bearer') ?? challenges.find((c) => c.scheme === 'basic');
      if (!challenge) {
        await response.body?.cancel();
        throw new OciError(
          `${what}: the registry answered 401 without a challenge Bosun can answer (WWW-Authenticate: "${header.slice(0, 200)}")`,
          { ...at, status: 401 },
        );
      }
      await response.body?.cancel();
      this.challenges.set(target.registry, challenge);
      authorization = await this.authorize(target, challenge, credential, what, true);
      if (authorization === undefined)
        throw new OciError(
          `${what}: the registry asks for credentials and none are configured for ${target.registry} (a kubernetes.io/dockerconfigjson Secret in the CatalogSource's spec.secrets, or docker login for the bosun command)`,
          { ...at, status: 401 },
        );
    }
  }

  /** The Authorization a request can carry before any 401, from what the registry asked before. */
  private cachedAuthorization(target: Target, credential: CredentialEntry | undefined): string | undefined {
    const challenge = this.challenges.get(target.registry);
    if (!challenge) return undefined;
    if (challenge.scheme === 'basic') return credential ? basic(credential) : undefined;
    const cached = this.tokens.get(tokenKey(target, challenge));
    return cached && cached.until > this.now() ? `Bearer ${cached.token}` : undefined;
  }

  private async authorize(
    target: Target,
    challenge: Challenge,
    credential: CredentialEntry | undefined,
    what: string,
    fresh: boolean,
  ): Promise<string | undefined> {
    if (challenge.scheme === 'basic') return credential ? basic(credential) : undefined;
    const key = tokenKey(target, challenge);
    const cached = this.tokens.get(key);
    if (!fresh && cached && cached.until > this.now()) return `Bearer ${cached.token}`;
    const token = await this.fetchToken(target, challenge, credential, what);
    this.tokens.set(key, token);
    return `Bearer ${token.token}`;
  }

  /** Docker's token flow: GET the realm with service and scopes, as the user when there are credentials. */
  private async fetchToken(
    target: Target,
    challenge: Challenge,
    credential: CredentialEntry | undefined,
    what: string,
  ): Promise<{ token: string; until: number }> {
    const at = { registry: target.registry, repository: target.repository };
    const realm = URL.parse(challenge.params.realm ?? '');
    if (!realm)
      throw new OciError(
        `${what}: the registry's token realm "${(challenge.params.realm ?? '').slice(0, 200)}" is not a URL`,
        at,
      );
    if (!urlAllowed(realm, this.insecure))
      throw new OciError(
        `${what}: the registry sends Bosun for a token to ${realm.protocol}//${realm.host}, which is not HTTPS; credentials are sent over plain HTTP only to this machine or a registry marked insecure`,
        at,
      );
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    for (const scope of scopesOf(target, challenge)) realm.searchParams.append('scope', scope);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (credential) headers.authorization = basic(credential);
    let response: Response;
    try {
      ({ response } = await fetchFollowing(
        this.agent,
        realm,
        { method: 'GET', headers, signal: AbortSignal.timeout(this.timeouts.requestMs) },
        this.insecure,
        () => what,
      ));
    } catch (err) {
      throw unreachable(err, `${what}: cannot get a token from ${realm.host}`, at);
    }
    if (!response.ok) {
      const body = await readBounded(response, MaxErrorBytes, what, at).catch(() => Buffer.alloc(0));
      const { codes, text } = registryErrorDetails(body.toString('utf8'));
      const who = credential
        ? `the credentials of ${credential.credential.username} (${credential.source})`
        : 'anonymous access';
      throw new OciError(
        `${what}: the token server ${realm.host} refused ${who}: ${response.status}${text ? ` ${text}` : ''}`,
        { ...at, status: response.status, codes },
      );
    }
    const body = await readBounded(response, MaxTokenBytes, `${what}: the token`, at);
    let parsed: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
    } catch {
      throw new OciError(`${what}: the token server ${realm.host} sent no JSON`, at);
    }
    const token =
      typeof parsed.token === 'string' && parsed.token !== '' ? parsed.token : parsed.access_token;
    if (typeof token !== 'string' || token === '' || /[\r\n]/.test(token))
      throw new OciError(`${what}: the token server ${realm.host} sent no token`, at);
    const seconds =
      typeof parsed.expires_in === 'number' && parsed.expires_in > 0
        ? parsed.expires_in
        : DefaultTokenSeconds;
    return { token, until: this.now() + seconds * 1000 - TokenMarginMs };
  }

  /** A 401 after authenticating: the credentials are wrong, or grant too little. */
  private async refused(
    response: Response,
    what: string,
    target: Target,
    credential: CredentialEntry | undefined,
    sent: string | undefined,
  ): Promise<OciError> {
    const body = await readBounded(response, MaxErrorBytes, what, target).catch(() => Buffer.alloc(0));
    const { codes, text } = registryErrorDetails(body.toString('utf8'));
    const who = credential
      ? `the credentials of ${credential.credential.username} (${credential.source})`
      : sent !== undefined
        ? 'an anonymous token'
        : 'anonymous access';
    return new OciError(`${what}: the registry refused ${who}${text ? `: ${text}` : ''}`, {
      registry: target.registry,
      repository: target.repository,
      status: 401,
      codes,
    });
  }

  /** An answer that is not the one asked for, in words: status, and the registry's error codes. */
  private async failure(response: Response, what: string, ref: ImageReference): Promise<OciError> {
    const at = where(ref);
    const body =
      response.status === 204 || !response.body
        ? Buffer.alloc(0)
        : await readBounded(response, MaxErrorBytes, what, at).catch(() => Buffer.alloc(0));
    const { codes, text } = registryErrorDetails(body.toString('utf8'));
    const plain =
      response.status === 404
        ? 'the registry has no such thing (404)'
        : response.status === 403
          ? 'the registry denies it (403)'
          : `the registry answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    return new OciError(`${what}: ${plain}${text ? `: ${text}` : ''}`, {
      ...at,
      status: response.status,
      codes,
    });
  }
}

const where = (ref: ImageReference): OciErrorWhere => ({
  registry: ref.registry,
  repository: ref.repository,
  image: formatReference(ref),
});

const pullTarget = (ref: ImageReference): Target => ({
  registry: ref.registry,
  repository: ref.repository,
  actions: ['pull'],
});
const pushTarget = (ref: ImageReference): Target => ({
  registry: ref.registry,
  repository: ref.repository,
  actions: ['pull', 'push'],
});

function scopesOf(target: Target, challenge: Challenge): string[] {
  const scopes = new Set([repositoryScope(target.repository, target.actions), ...(target.scopes ?? [])]);
  // The registry's own scope (it names what this request needs) is asked for too.
  for (const s of (challenge.params.scope ?? '').split(' ')) if (s !== '') scopes.add(s);
  return [...scopes].sort();
}

const tokenKey = (target: Target, challenge: Challenge) =>
  `${target.registry}\n${challenge.params.realm ?? ''}\n${challenge.params.service ?? ''}\n${[
    repositoryScope(target.repository, target.actions),
    ...(target.scopes ?? []),
  ]
    .sort()
    .join(' ')}`;

const basic = (c: CredentialEntry) =>
  `Basic ${Buffer.from(`${c.credential.username}:${c.credential.password}`).toString('base64')}`;
