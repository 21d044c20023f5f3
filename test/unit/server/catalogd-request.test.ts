/**
 * The pure half of catalogd's HTTP API: which catalog a path names (and that no crafted path
 * names one it should not), the metas query, the conditional headers as Go's net/http decides
 * them, HTTP dates, and when to gzip.
 */
import { describe, expect, it } from 'vitest';
import {
  catalogBaseUrl,
  catalogdHostNames,
  evaluatePreconditions,
  formatHttpDate,
  parseCatalogdPath,
  parseHttpDate,
  parseMetasQuery,
  Precondition,
  isWholeContent,
  wantsGzip,
} from '../../../src/server/catalogd-request.js';

describe('parseCatalogdPath', () => {
  it.each([
    ['/catalogs/operatorhub/api/v1/all', { name: 'operatorhub', endpoint: 'all' }],
    ['/catalogs/operatorhub/api/v1/metas', { name: 'operatorhub', endpoint: 'metas' }],
    ['/catalogs/my.catalog-1/api/v1/all', { name: 'my.catalog-1', endpoint: 'all' }],
    [`/catalogs/${'a'.repeat(253)}/api/v1/all`, { name: 'a'.repeat(253), endpoint: 'all' }],
  ])('%s names a catalog', (path, expected) => {
    expect(parseCatalogdPath(path)).toEqual(expected);
  });

  // Each shape of escaping the catalog's name: traversal, plain and encoded (once, twice, in
  // UTF-8 overlong form), encoded separators, empty and absolute segments, NUL, case and
  // Unicode lookalikes, and names too long. None names a catalog.
  it.each([
    '/catalogs/../api/v1/all',
    '/catalogs/./api/v1/all',
    '/catalogs/x/../y/api/v1/all',
    '/catalogs/../../etc/passwd',
    '/catalogs/%2e%2e/api/v1/all',
    '/catalogs/%2E%2E/api/v1/all',
    '/catalogs/.%2e/api/v1/all',
    '/catalogs/%252e%252e/api/v1/all',
    '/catalogs/%c0%ae%c0%ae/api/v1/all',
    '/catalogs/a%2Fb/api/v1/all',
    '/catalogs/a%2fb/api/v1/all',
    '/catalogs/..%2F..%2Fetc/api/v1/all',
    '/catalogs/a%252Fb/api/v1/all',
    '/catalogs/a%5cb/api/v1/all',
    '/catalogs/a\\..\\b/api/v1/all',
    '/catalogs//api/v1/all',
    '/catalogs//etc/api/v1/all',
    '/catalogs/a//api/v1/all',
    '/catalogs/a/api/v1/all/',
    '/catalogs/a/api/v1//all',
    '/catalogs/a/b/api/v1/all',
    '/catalogs/a%00/api/v1/all',
    '/catalogs/a\u0000/api/v1/all',
    '/catalogs/Ops/api/v1/all',
    '/catalogs/o\u0440s/api/v1/all',
    '/catalogs/-ops/api/v1/all',
    '/catalogs/ops./api/v1/all',
    '/catalogs/a..b/api/v1/all',
    `/catalogs/${'a'.repeat(254)}/api/v1/all`,
    '/catalogs/ops/api/v1/other',
    '/catalogs/ops/api/v2/all',
    '/catalogs/ops',
    '/catalogs/',
    '//catalogs/ops/api/v1/all',
  ])('%s names none', (path) => {
    expect(parseCatalogdPath(path)).toBeUndefined();
  });

  it.each([
    ['http://bosun.olm.svc:8080', ['bosun.olm.svc']],
    ['https://Catalogd.Example.com/x', ['catalogd.example.com']],
    ['http://10.0.0.7:8080', []],
    ['http://[::1]:8080', []],
    ['not a url', []],
    [undefined, []],
  ])('the catalogd URL %s adds the host names %j to those answered', (url, names) => {
    expect(catalogdHostNames(url)).toEqual(names);
  });

  it('base URLs are the server root, /catalogs/ and the name', () => {
    expect(catalogBaseUrl('http://bosun.olm.svc:8080', 'ops')).toBe('http://bosun.olm.svc:8080/catalogs/ops');
    expect(catalogBaseUrl('http://127.0.0.1:41234/', 'ops')).toBe('http://127.0.0.1:41234/catalogs/ops');
  });
});

describe('parseMetasQuery', () => {
  it.each([
    ['', { ok: true, schema: '', package: '', name: '' }],
    ['schema=olm.bundle&package=etcd', { ok: true, schema: 'olm.bundle', package: 'etcd', name: '' }],
    ['name=etcd.v0.9.4&name=other', { ok: true, schema: '', package: '', name: 'etcd.v0.9.4' }],
    ['package=a%20b', { ok: true, schema: '', package: 'a b', name: '' }],
    ['schema=', { ok: true, schema: '', package: '', name: '' }],
    ['version=1', { ok: false, parameter: 'version' }],
    ['schema=olm.bundle&Package=etcd', { ok: false, parameter: 'Package' }],
    ['schema=x&foo', { ok: false, parameter: 'foo' }],
  ])('%s', (query, expected) => {
    expect(parseMetasQuery(query)).toEqual(expected);
  });
});

describe('evaluatePreconditions', () => {
  const modified = Date.UTC(2026, 10, 26, 12, 0, 0, 700);
  const at = (ms: number) => formatHttpDate(ms);
  it.each([
    ['no condition', {}, Precondition.Serve],
    [
      'If-Modified-Since the modification (sub-second part ignored)',
      { ifModifiedSince: at(modified) },
      Precondition.NotModified,
    ],
    ['If-Modified-Since after it', { ifModifiedSince: at(modified + 5000) }, Precondition.NotModified],
    ['If-Modified-Since a second before it', { ifModifiedSince: at(modified - 1000) }, Precondition.Serve],
    ['If-Modified-Since that does not parse', { ifModifiedSince: 'yesterday' }, Precondition.Serve],
    ['If-None-Match *', { ifNoneMatch: '*' }, Precondition.NotModified],
    [
      'If-None-Match a tag (there is none), over If-Modified-Since',
      { ifNoneMatch: '"x"', ifModifiedSince: at(modified) },
      Precondition.Serve,
    ],
    ['If-Match a tag', { ifMatch: '"x"' }, Precondition.Failed],
    ['If-Match *', { ifMatch: '*' }, Precondition.Serve],
    ['If-Match a list with *', { ifMatch: '"x", *' }, Precondition.Serve],
    [
      'If-Unmodified-Since before the modification',
      { ifUnmodifiedSince: at(modified - 1000) },
      Precondition.Failed,
    ],
    ['If-Unmodified-Since at it', { ifUnmodifiedSince: at(modified) }, Precondition.Serve],
    ['If-Unmodified-Since that does not parse', { ifUnmodifiedSince: 'soon' }, Precondition.Serve],
  ])('%s', (_, headers, expected) => {
    expect(evaluatePreconditions(headers, modified)).toBe(expected);
  });
});

describe('parseHttpDate', () => {
  const t = Date.UTC(1994, 10, 6, 8, 49, 37);
  it.each([
    ['Sun, 06 Nov 1994 08:49:37 GMT', t],
    ['Sunday, 06-Nov-94 08:49:37 GMT', t],
    ['Sun Nov  6 08:49:37 1994', t],
    ['Thu, 01 Jan 2026 00:00:00 GMT', Date.UTC(2026, 0, 1)],
    ['Thu, 31 Feb 2026 00:00:00 GMT', undefined],
    ['2026-01-01T00:00:00Z', undefined],
    ['Sun, 06 Nov 1994 08:49:37 PST', undefined],
    ['', undefined],
  ])('%s', (text, expected) => {
    expect(parseHttpDate(text)).toBe(expected);
  });

  it('reads back what Last-Modified writes', () => {
    expect(parseHttpDate(formatHttpDate(t))).toBe(t);
  });
});

describe('wantsGzip', () => {
  it.each([
    ['gzip', 4096, true],
    ['gzip, deflate, br', 4096, true],
    ['br;q=1.0, gzip;q=0.5', 4096, true],
    ['x-gzip', 4096, true],
    ['*', 4096, true],
    ['gzip;q=0', 4096, false],
    ['*;q=0', 4096, false],
    ['gzip;q=0, *', 4096, false],
    ['deflate', 4096, false],
    [undefined, 4096, false],
    ['gzip', 1023, false],
  ] as const)('%s for %d bytes: %s', (header, length, expected) => {
    expect(wantsGzip(header, length)).toBe(expected);
  });
});

describe('isWholeContent', () => {
  it.each([
    ['the whole file', [{ offset: 0, length: 100 }], 100, true],
    ['an empty file', [{ offset: 0, length: 0 }], 0, true],
    ['its start only', [{ offset: 0, length: 99 }], 100, false],
    ['from past its start', [{ offset: 1, length: 99 }], 100, false],
    [
      'every part, but in two sections',
      [
        { offset: 0, length: 50 },
        { offset: 50, length: 50 },
      ],
      100,
      false,
    ],
    ['no section', [], 100, false],
  ])('%s: %s', (_, sections, size, expected) => {
    expect(isWholeContent(sections, size)).toBe(expected);
  });
});
