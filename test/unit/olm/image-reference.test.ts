import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageReferenceError, parseImageReference } from '../../../src/olm/image-reference.js';
import { GoTool, goTool } from '../../support/go-tool.js';
import { runs } from '../../support/properties.js';

const h64 = '62218aee7553b31db1f65bc30b3c6b6595c2fd631b2e1792e24e554a47080aa6';

// Answers of distribution/reference v0.6.0's ParseNormalizedNamed (opm v1.73's loader), recorded
// with tools/image-reference: `undefined` where it accepts the reference, its error otherwise.
const recorded: [string, string | undefined][] = [
  ['busybox', undefined],
  ['busybox:latest', undefined],
  ['library/busybox', undefined],
  ['index.docker.io/busybox', undefined],
  ['quay.io/operator-framework/olm:v0.46.0', undefined],
  [`quay.io/org/op@sha256:${h64}`, undefined],
  [`quay.io/org/op:v1@sha256:${h64}`, undefined],
  [`ubuntu@sha256:${h64}`, undefined],
  [`quay.io/org/op@sha384:${h64}${h64.slice(0, 32)}`, undefined],
  // The corpus' strimzi-cluster-operator.v0.20.0 relatedImages.
  [`docker.io/strimzi/operator@@sha256:${h64}`, 'invalid reference format'],
  ['localhost/op:1', undefined],
  ['localhost:5000/op:1', undefined],
  ['127.0.0.1:5000/a/b/c:tag', undefined],
  ['[::1]:5000/op:1', undefined],
  ['registry.example.com/a__b/c--d/e.f_g:t', undefined],
  ['quay.io/Org/op:v1', 'invalid reference format: repository name (Org/op) must be lowercase'],
  ['Quay.io/org/op:v1', undefined],
  ['QUAY/op', undefined],
  ['quay.io/org/op:', 'invalid reference format'],
  ['quay.io/org/op:-bad', 'invalid reference format'],
  [`quay.io/org/op:${'a'.repeat(128)}`, undefined],
  [`quay.io/org/op:${'a'.repeat(129)}`, 'invalid reference format'],
  [`quay.io/org/op@sha256:${h64.toUpperCase()}`, 'invalid checksum digest format'],
  [`quay.io/org/op@sha256:${h64.slice(1)}`, 'invalid checksum digest length'],
  [`quay.io/org/op@sha512:${h64}`, 'invalid checksum digest length'],
  [`quay.io/org/op@md5:${h64}`, 'unsupported digest algorithm'],
  [h64, 'a repository name cannot be a 64-character hexadecimal string'],
  [`op/${h64}`, undefined],
  [`quay.io/${'a'.repeat(256)}`, 'repository name must not be more than 255 characters'],
  [`quay.io/${'a'.repeat(255)}`, undefined],
  ['quay.io//op', 'invalid reference format'],
  ['quay.io/op/', 'invalid reference format'],
  ['-op', 'invalid reference format'],
  ['op-', 'invalid reference format'],
  ['a.-b', 'invalid reference format'],
  ['a---b', undefined],
  ['a__b', undefined],
  ['a___b', 'invalid reference format'],
  ['quay.io:port/op', 'invalid reference format'],
  ['quay.io:5000/op', undefined],
  ['example.com-/op', 'invalid reference format'],
  ['a b', 'invalid reference format'],
  ['quay.io/org/op:v1 ', 'invalid reference format'],
  ['quay.io/org/op\n', 'invalid reference format'],
  ['', 'invalid reference format'],
  ['quay.io/org/op:v1@', 'invalid reference format'],
  ['exa_mple.com/op', undefined],
];

// Parts as distribution/reference v0.6.0 splits them (recorded with tools/image-reference).
const parts: [string, ReturnType<typeof partsOf>][] = [
  ['busybox', { domain: 'docker.io', path: 'library/busybox' }],
  ['index.docker.io/busybox:1', { domain: 'docker.io', path: 'library/busybox', tag: '1' }],
  ['docker.io/org/op', { domain: 'docker.io', path: 'org/op' }],
  ['localhost/op:1', { domain: 'localhost', path: 'op', tag: '1' }],
  ['localhost:5000/a/b', { domain: 'localhost:5000', path: 'a/b' }],
  ['[::1]:5000/op:1', { domain: '[::1]:5000', path: 'op', tag: '1' }],
  ['QUAY/op', { domain: 'QUAY', path: 'op' }],
  [
    `quay.io/org/op:v1@sha256:${h64}`,
    { domain: 'quay.io', path: 'org/op', tag: 'v1', digest: `sha256:${h64}` },
  ],
];

describe('image references split into registry, repository, tag and digest', () => {
  it.each(parts)('%j', (ref, expected) => {
    expect(parseImageReference(ref)).toEqual({ ok: true, value: expected });
  });

  it('refuses what imageReferenceError refuses, with its words', () => {
    expect(parseImageReference('quay.io/Org/op')).toEqual({
      ok: false,
      error: 'invalid reference format: repository name (Org/op) must be lowercase',
    });
  });
});

describe('image references, as opm reads them', () => {
  it.each(recorded)('%j', (ref, error) => {
    // The 64-hex-character name is the only answer worded differently from the library's.
    if (ref === h64) expect(imageReferenceError(ref)).toMatch(/64-character hexadecimal/);
    else expect(imageReferenceError(ref)).toBe(error);
  });
});

const built = await goTool('image-reference');
// Without Go (or the module proxy) the recorded table above still runs; the live comparison cannot.
if (!built.ok) console.warn(`image references against distribution/reference skipped: ${built.why}`);

describe.skipIf(!built.ok)('image references against distribution/reference itself', () => {
  let tool: GoTool<
    string,
    { ok: boolean; error?: string; domain?: string; path?: string; tag?: string; digest?: string }
  >;
  beforeAll(() => {
    if (built.ok) tool = new GoTool(built.path);
  });
  afterAll(() => tool?.close());

  it('the recorded table is what the library answers', async () => {
    for (const [ref, error] of recorded) {
      const answer = await tool.ask(ref);
      expect({ ref, ok: answer.ok }).toEqual({ ref, ok: error === undefined });
      if (error !== undefined && ref !== h64) expect(answer.error).toBe(error);
    }
  });

  it('splits the recorded references into the parts the library gives', async () => {
    for (const [ref, error] of recorded) {
      if (error !== undefined) continue;
      const parsed = parseImageReference(ref);
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect({ ref, ...parsed.value }).toEqual({ ref, ...partsOf(await tool.ask(ref)) });
    }
  });

  it('accepts and refuses exactly what the library does, on generated references', async () => {
    const piece = fc.constantFrom(
      'a',
      'b',
      'z9',
      'Op',
      '.',
      '_',
      '__',
      '___',
      '-',
      '--',
      '/',
      '//',
      ':',
      '@',
      '5000',
      'localhost',
      'quay.io',
      'docker.io',
      'index.docker.io',
      'sha256',
      'sha512',
      'md5',
      h64,
      h64.toUpperCase(),
      '[::1]',
      ' ',
      'x'.repeat(130),
    );
    const seen = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 9 }), async (pieces) => {
        const ref = pieces.join('');
        const answer = await tool.ask(ref);
        seen[answer.ok ? 'accepted' : 'refused']++;
        expect({ ref, accepted: imageReferenceError(ref) === undefined }).toEqual({
          ref,
          accepted: answer.ok,
        });
        // Where both accept, the registry, repository, tag and digest are the library's too.
        const parsed = parseImageReference(ref);
        if (answer.ok && parsed.ok) expect({ ref, ...parsed.value }).toEqual({ ref, ...partsOf(answer) });
      }),
      runs(2000),
    );
    // Both sides of the grammar were reached, not only refusals.
    expect(seen.accepted).toBeGreaterThan(100);
    expect(seen.refused).toBeGreaterThan(100);
  });
});

/** The tool's answer as the parts parseImageReference gives (no tag or digest when it has none). */
function partsOf(a: { domain?: string; path?: string; tag?: string; digest?: string }) {
  return {
    domain: a.domain,
    path: a.path,
    ...(a.tag !== undefined && { tag: a.tag }),
    ...(a.digest !== undefined && { digest: a.digest }),
  };
}
