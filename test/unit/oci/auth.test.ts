import { describe, expect, it } from 'vitest';
import {
  credentialFor,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  mergeCredentials,
  parseAuthKey,
  parseChallenges,
} from '../../../src/oci/auth.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('WWW-Authenticate challenges', () => {
  it.each([
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"',
      [
        {
          scheme: 'bearer',
          params: {
            realm: 'https://auth.docker.io/token',
            service: 'registry.docker.io',
            scope: 'repository:library/busybox:pull',
          },
        },
      ],
    ],
    // A comma inside a quoted value does not end it (push scopes have one).
    [
      'Bearer realm="https://q.io/v2/auth",scope="repository:a/b:pull,push"',
      [{ scheme: 'bearer', params: { realm: 'https://q.io/v2/auth', scope: 'repository:a/b:pull,push' } }],
    ],
    ['Basic realm="Registry Realm"', [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]],
    // Case and spacing as servers vary them; token values; escapes in quoted strings.
    [
      'BEARER  Realm = "https://x/t" , Service=reg, error="invalid_token", x="a\\"b"',
      [
        {
          scheme: 'bearer',
          params: { realm: 'https://x/t', service: 'reg', error: 'invalid_token', x: 'a"b' },
        },
      ],
    ],
    // Several challenges in one header.
    [
      'Basic realm="r", Bearer realm="https://t/token",service="s"',
      [
        { scheme: 'basic', params: { realm: 'r' } },
        { scheme: 'bearer', params: { realm: 'https://t/token', service: 's' } },
      ],
    ],
    ['', []],
    ['realm="no scheme"', []],
    ['Bearer realm="unterminated', [{ scheme: 'bearer', params: { realm: 'unterminated' } }]],
  ])('%s', (header, expected) => {
    expect(parseChallenges(header)).toEqual(expected);
  });
});

describe('credentials from Docker configs', () => {
  it.each([
    ['quay.io', { host: 'quay.io', path: '' }],
    ['https://quay.io', { host: 'quay.io', path: '' }],
    ['https://index.docker.io/v1/', { host: 'docker.io', path: '' }],
    ['registry-1.docker.io', { host: 'docker.io', path: '' }],
    ['http://localhost:5000/v2/', { host: 'localhost:5000', path: '' }],
    ['registry.example.com/team/', { host: 'registry.example.com', path: 'team' }],
    ['[::1]:5000', { host: '[::1]:5000', path: '' }],
    ['not a host!', undefined],
  ])('the key %j', (key, expected) => {
    expect(parseAuthKey(key)).toEqual(expected);
  });

  it('reads auth and username/password entries, and finds the most specific one', () => {
    const store = credentialsFromDockerConfig(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: b64('hub:pw:with:colons') },
          'registry.example.com': { username: 'all', password: 'p1' },
          'registry.example.com/team': { auth: b64('team:p2') },
          'helper.example.com': {},
        },
        credHelpers: { 'gcr.io': 'gcloud' },
        credsStore: 'desktop',
      }),
      '~/.docker/config.json',
    );
    expect(credentialFor(store, 'docker.io', 'library/busybox')?.credential).toEqual({
      username: 'hub',
      password: 'pw:with:colons',
    });
    expect(credentialFor(store, 'registry.example.com', 'team/op')?.credential.username).toBe('team');
    expect(credentialFor(store, 'registry.example.com', 'teams/op')?.credential.username).toBe('all');
    expect(credentialFor(store, 'Registry.Example.com', 'other')?.credential.username).toBe('all');
    expect(credentialFor(store, 'helper.example.com', 'x')).toBeUndefined();
    expect(credentialFor(store, 'quay.io', 'x')).toBeUndefined();
    expect(store.helpers).toEqual([
      { host: 'gcr.io', helper: 'gcloud', source: '~/.docker/config.json' },
      { host: '*', helper: 'desktop', source: '~/.docker/config.json' },
    ]);
  });

  it('takes the first of several Secrets that name the same registry', () => {
    const one = credentialsFromDockerConfig(
      JSON.stringify({ auths: { 'q.io': { auth: b64('one:1') } } }),
      'Secret a/one',
    );
    const two = credentialsFromDockerConfig(
      JSON.stringify({ auths: { 'q.io': { auth: b64('two:2') } } }),
      'Secret a/two',
    );
    expect(credentialFor(mergeCredentials(one, two), 'q.io', 'x')?.source).toBe('Secret a/one');
  });

  it.each([
    ['{', /^src: not a JSON Docker config/],
    ['[]', /^src: a Docker config is a JSON object$/],
    ['{"auths": []}', /^src: auths: is not an object of registries$/],
    ['{"auths": {"q.io": "x"}}', /^src: auths\["q.io"\]: is not an object$/],
    ['{"auths": {"q io": {}}}', /^src: auths\["q io"\]: is not a registry address$/],
    ['{"auths": {"q.io": {"auth": 5}}}', /^src: auths\["q.io"\].auth: is not a string$/],
    ['{"auths": {"q.io": {"auth": "!!"}}}', /^src: auths\["q.io"\].auth: is not base64$/],
    [
      `{"auths": {"q.io": {"auth": "${b64('nocolon')}"}}}`,
      /^src: auths\["q.io"\].auth: is not the base64 of "username:password"$/,
    ],
    [
      '{"auths": {"q.io": {"username": "u"}}}',
      /^src: auths\["q.io"\]: username and password must both be strings$/,
    ],
  ])('refuses %s, naming the source and the key', (text, message) => {
    expect(() => credentialsFromDockerConfig(text, 'src')).toThrow(message);
  });

  it('reads pull Secrets of both Docker types, and names a Secret of another type', () => {
    const json = { auths: { 'q.io': { auth: b64('u:p') } } };
    const s = credentialsFromSecret({
      metadata: { namespace: 'olm', name: 'pull' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify(json)) },
    });
    expect(credentialFor(s, 'q.io', 'x')).toEqual({
      host: 'q.io',
      path: '',
      credential: { username: 'u', password: 'p' },
      source: 'Secret olm/pull data..dockerconfigjson',
    });
    const legacy = credentialsFromSecret({
      metadata: { namespace: 'olm', name: 'old' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify(json.auths)) },
    });
    expect(credentialFor(legacy, 'q.io', 'x')?.credential.username).toBe('u');
    expect(() =>
      credentialsFromSecret({
        metadata: { namespace: 'olm', name: 'tls' },
        type: 'kubernetes.io/tls',
        data: {},
      }),
    ).toThrow(
      'Secret olm/tls: type: is "kubernetes.io/tls"; registry credentials must be in a Secret of type kubernetes.io/dockerconfigjson',
    );
    expect(() =>
      credentialsFromSecret({
        metadata: { namespace: 'olm', name: 'empty' },
        type: 'kubernetes.io/dockerconfigjson',
        data: {},
      }),
    ).toThrow('Secret olm/empty: data..dockerconfigjson: is missing');
  });
});
