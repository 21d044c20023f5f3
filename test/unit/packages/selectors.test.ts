import { describe, expect, it } from 'vitest';
import {
  fieldsMatch,
  labelMatcher,
  parseFieldSelector,
  parseLabelSelector,
} from '../../../src/packages/selectors.js';

const matches = (selector: string, labels: Record<string, string> | undefined) => {
  const parsed = parseLabelSelector(selector);
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  return labelMatcher(parsed.value)(labels);
};

describe('label selectors', () => {
  const labels = {
    catalog: 'community',
    provider: 'Red Hat',
    'operatorframework.io/arch.amd64': 'supported',
  };
  it.each([
    ['', true],
    ['catalog=community', true],
    ['catalog==community', true],
    ['catalog=other', false],
    ['catalog!=other', true],
    ['missing!=x', true],
    ['catalog in (other, community)', true],
    ['catalog notin (community)', false],
    ['missing notin (x)', true],
    ['operatorframework.io/arch.amd64', true],
    ['!operatorframework.io/arch.amd64', false],
    ['!missing', true],
    ['catalog=community,!missing,provider', true],
    ['catalog=community,missing', false],
  ])('%s → %s', (selector, expected) => {
    expect(matches(selector, labels)).toBe(expected);
  });

  it('an object without labels matches only negative requirements', () => {
    expect(matches('!a', undefined)).toBe(true);
    expect(matches('a', undefined)).toBe(false);
  });

  it.each(['a b', 'a in b', '=x', 'in (a)', 'Bad Key=x', 'a=(b)'])(
    'refuses "%s" with a message naming it',
    (selector) => {
      const parsed = parseLabelSelector(selector);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.errors[0]!.message).toMatch(/^labelSelector: /);
    },
  );
});

describe('field selectors', () => {
  const supported = ['metadata.name', 'metadata.namespace'];
  it('reads =, == and != over the supported fields', () => {
    const parsed = parseFieldSelector('metadata.name=etcd,metadata.namespace!=olm', supported);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(fieldsMatch(parsed.value, { 'metadata.name': 'etcd', 'metadata.namespace': 'team-a' })).toBe(true);
    expect(fieldsMatch(parsed.value, { 'metadata.name': 'etcd', 'metadata.namespace': 'olm' })).toBe(false);
    expect(fieldsMatch(parsed.value, { 'metadata.name': 'other', 'metadata.namespace': 'team-a' })).toBe(
      false,
    );
  });

  it('refuses other fields by name, as OLM does', () => {
    const parsed = parseFieldSelector('status.packageName=x', supported);
    expect(parsed).toEqual({
      ok: false,
      errors: [
        {
          message:
            'fieldSelector: field label not supported: status.packageName (supported: metadata.name, metadata.namespace)',
        },
      ],
    });
  });
});
