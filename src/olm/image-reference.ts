/**
 * Container image references as opm's catalog loader accepts them: the reference grammar of the
 * distribution project, read the way its `ParseNormalizedNamed` reads a pull spec (a familiar
 * name such as `busybox` or `quay.io/org/op:v1` is completed to a full name first), with the
 * digest checked as the OCI digest rules check it (sha256, sha384 or sha512, lower-case hex of
 * the algorithm's exact length). A catalog holding a reference that fails here cannot be served
 * by `opm serve`, so Bosun refuses it too.
 */

// The grammar's pieces, as the distribution project's reference grammar defines them.
const alphanumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const remoteName = `${pathComponent}(?:/${pathComponent})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domainName = `${domainComponent}(?:\\.${domainComponent})*`;
const host = `(?:${domainName}|\\[(?:[a-fA-F0-9:]+)\\])`;
const domainAndPort = `${host}(?::[0-9]+)?`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';

const referencePattern = new RegExp(`^((?:${domainAndPort}/)?${remoteName})(?::(${tag}))?(?:@(${digest}))?$`);
const namePattern = new RegExp(`^(?:(${domainAndPort})/)?(${remoteName})$`);
const hexIdentifier = /^[a-f0-9]{64}$/;

/** Hex length of each digest algorithm an OCI digest may name. */
const digestHexLength: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

export const maxRepositoryLength = 255;

/**
 * Why `ref` is not an image reference opm accepts, in the words its loader uses; `undefined` when
 * it is one. The empty string is not checked here: whether a reference may be empty is the
 * caller's rule (a bundle may carry its manifests instead of an image).
 */
export function imageReferenceError(ref: string): string | undefined {
  if (hexIdentifier.test(ref)) return 'a repository name cannot be a 64-character hexadecimal string';
  const { domain, remainder } = splitDomain(ref);
  const colon = remainder.indexOf(':');
  const repository = colon === -1 ? remainder : remainder.slice(0, colon);
  if (repository.toLowerCase() !== repository)
    return `invalid reference format: repository name (${repository}) must be lowercase`;
  return parseFull(`${domain}/${remainder}`);
}

/** An image reference in its full form, as distribution's `ParseNormalizedNamed` splits it. */
export interface ImageReferenceParts {
  /** The registry, with its port when it has one: `quay.io`, `localhost:5000`, `docker.io`. */
  domain: string;
  /** The repository below it: `org/op`, `library/busybox`. */
  path: string;
  tag?: string;
  digest?: string;
}

/**
 * The parts of `ref` as opm's loader (and so every registry client of the Go ecosystem) reads
 * them, or why it is not a reference. One grammar with `imageReferenceError`: a reference is
 * parsed exactly when that function accepts it.
 */
export function parseImageReference(
  ref: string,
): { ok: true; value: ImageReferenceParts } | { ok: false; error: string } {
  const error = imageReferenceError(ref);
  if (error !== undefined) return { ok: false, error };
  const { domain, remainder } = splitDomain(ref);
  const m = referencePattern.exec(`${domain}/${remainder}`)!;
  const name = namePattern.exec(m[1]!)!;
  return {
    ok: true,
    value: {
      domain: name[1]!,
      path: name[2]!,
      ...(m[2] !== undefined && { tag: m[2] }),
      ...(m[3] !== undefined && { digest: m[3] }),
    },
  };
}

/**
 * Splits a familiar name into registry and the rest as Docker does: the first path element is a
 * registry when it has a `.` or `:`, is `localhost`, or has upper-case letters; otherwise the
 * registry is Docker Hub, where a single-element name lives under `library/`.
 */
function splitDomain(ref: string): { domain: string; remainder: string } {
  const slash = ref.indexOf('/');
  let domain = 'docker.io';
  let remainder = ref;
  if (slash !== -1) {
    const first = ref.slice(0, slash);
    const rest = ref.slice(slash + 1);
    if (first === 'index.docker.io') remainder = rest;
    else if (first === 'localhost' || /[.:]/.test(first) || first.toLowerCase() !== first) {
      domain = first;
      remainder = rest;
    }
  }
  if (domain === 'docker.io' && !remainder.includes('/')) remainder = `library/${remainder}`;
  return { domain, remainder };
}

function parseFull(ref: string): string | undefined {
  const m = referencePattern.exec(ref);
  if (!m) {
    if (referencePattern.test(ref.toLowerCase()))
      return 'invalid reference format: repository name must be lowercase';
    return 'invalid reference format';
  }
  const name = namePattern.exec(m[1]!);
  const path = name ? name[2]! : m[1]!;
  if (path.length > maxRepositoryLength)
    return `repository name must not be more than ${maxRepositoryLength} characters`;
  return m[3] === undefined ? undefined : digestError(m[3]);
}

function digestError(d: string): string | undefined {
  const i = d.indexOf(':');
  const algorithm = d.slice(0, i);
  const hex = d.slice(i + 1);
  const length = digestHexLength[algorithm];
  if (length === undefined)
    return /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*$/.test(algorithm)
      ? 'unsupported digest algorithm'
      : 'invalid checksum digest format';
  if (hex.length !== length) return 'invalid checksum digest length';
  if (!/^[a-f0-9]+$/.test(hex)) return 'invalid checksum digest format';
  return undefined;
}
