/**
 * The Host names the manager's HTTP port answers to: its IP addresses, localhost and configured
 * names; never a name a DNS-rebinding page could have made resolve to it.
 */
import { describe, expect, it } from 'vitest';
import { checkHost, hostName } from '../../../src/server/host-check.js';

const names = ['catalog.example.com'];

describe('checkHost', () => {
  it.each([
    '127.0.0.1:8080',
    '127.0.0.1',
    '10.244.0.17:8080',
    '[::1]:8080',
    '[fe80::1]',
    'localhost:8080',
    'LOCALHOST',
    'catalog.example.com',
    'Catalog.Example.COM:443',
  ])('answers %s', (host) => {
    expect(checkHost(host, names)).toEqual({ ok: true });
  });

  it.each([
    // Names a rebinding page's site could have: its own, lookalikes, and names that embed an address.
    'evil.example',
    'evil.example:8080',
    '127.0.0.1.nip.io:8080',
    '7f000001.rbndr.us',
    'localhost.evil.example',
    'localhost.',
    'catalog.example.com.evil.example',
    'evil-catalog.example.com',
    'catalog.example.com.',
    'kubernetes.default.svc',
    '2130706433',
  ])('refuses %s with 421', (host) => {
    expect(checkHost(host, names)).toMatchObject({ ok: false, status: 421 });
  });

  it.each([
    ['no Host', undefined],
    ['an empty Host', ''],
    ['userinfo', 'evil.example@127.0.0.1'],
    ['two hosts', '127.0.0.1, evil.example'],
    ['a space', '127.0.0.1 evil.example'],
    ['a path', '127.0.0.1/evil'],
    ['brackets around no IPv6 address', '[evil.example]:80'],
    ['a port that is not one', '127.0.0.1:80x'],
  ])('refuses %s with 400', (_what, host) => {
    expect(checkHost(host, names)).toMatchObject({ ok: false, status: 400 });
  });
});

describe('hostName', () => {
  it.each([
    ['127.0.0.1:8080', '127.0.0.1'],
    ['[::1]:80', '::1'],
    ['Example.COM', 'example.com'],
  ])('%s → %s', (header, name) => {
    expect(hostName(header)).toBe(name);
  });
});
