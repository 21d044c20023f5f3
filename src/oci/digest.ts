/**
 * Content digests: parsed as the OCI image spec defines them, computed and verified while content
 * streams, so that nothing unverified is ever handed on as verified. Bosun computes sha256 (what
 * registries use) and verifies sha512 as well.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DigestMismatchError, type OciErrorWhere } from './errors.js';

const algorithms: Record<string, number> = { sha256: 64, sha512: 128 };

/** Why `digest` is not one this client can verify; undefined when it is. */
export function digestError(digest: string): string | undefined {
  const i = digest.indexOf(':');
  if (i <= 0) return `"${digest.slice(0, 150)}" is not a digest (algorithm:hex)`;
  const algorithm = digest.slice(0, i);
  const hex = digest.slice(i + 1);
  const length = algorithms[algorithm];
  if (length === undefined)
    return `digest algorithm "${algorithm.slice(0, 50)}" is not supported (sha256, sha512)`;
  if (hex.length !== length || !/^[a-f0-9]+$/.test(hex))
    return `digest "${digest.slice(0, 150)}" is not ${length} lower-case hexadecimal characters`;
  return undefined;
}

export function sha256Digest(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The digest of `data` with the algorithm `expected` names. */
export function digestWithAlgorithmOf(expected: string, data: Uint8Array): string {
  const algorithm = expected.slice(0, expected.indexOf(':'));
  return `${algorithm}:${createHash(algorithm).update(data).digest('hex')}`;
}

/** The hex part of a digest: the file name of a blob in an image layout. */
export const digestHex = (digest: string): string => digest.slice(digest.indexOf(':') + 1);

/**
 * A pass-through stream that counts and hashes what flows through it and fails, instead of
 * ending, when the content is longer than `size`, shorter, or hashes to another digest. A reader
 * therefore sees the end of the stream only for verified content; whatever it kept of a stream
 * that failed, it must drop.
 */
export function verifyingStream(expected: { digest: string; size: number }, where: OciErrorWhere): Transform {
  const algorithm = expected.digest.slice(0, expected.digest.indexOf(':'));
  const hash = createHash(algorithm);
  let seen = 0;
  const name = where.image ?? where.repository ?? '';
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      seen += chunk.length;
      if (seen > expected.size) {
        done(
          new DigestMismatchError(
            `${name}: blob ${expected.digest} is longer than the ${expected.size} bytes its descriptor gives; nothing of it was kept`,
            where,
          ),
        );
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      if (seen !== expected.size) {
        done(
          new DigestMismatchError(
            `${name}: blob ${expected.digest} has ${seen} bytes where its descriptor gives ${expected.size}; nothing of it was kept`,
            where,
          ),
        );
        return;
      }
      const got = `${algorithm}:${hash.digest('hex')}`;
      if (got !== expected.digest) {
        done(
          new DigestMismatchError(
            `${name}: blob ${expected.digest} has the digest ${got}: the registry served other content than the digest names; nothing of it was kept`,
            where,
          ),
        );
        return;
      }
      done();
    },
  });
}
