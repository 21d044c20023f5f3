/**
 * What a manager loads before it needs it is memory it holds for good. The gRPC client of a
 * registry server (@grpc/grpc-js and protobufjs, 3 MiB once loaded) is loaded only when a
 * CatalogSource with `spec.address` is first read, and the certificate library (@peculiar/x509,
 * 4 MiB) only when a serving certificate is first issued; most managers do neither. The web
 * catalog's Markdown renderer (marked and sanitize-html, 16 MiB) is loaded only when a package
 * page is first served.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasPackage, modulesLoadedBy } from '../../support/module-graph.js';

const src = join(import.meta.dirname, '../../../src');

describe('the modules a manager loads at start', () => {
  it('loads no gRPC client until a registry server is read', async () => {
    const loaded = await modulesLoadedBy(join(src, 'manager/manager.ts'));
    // The walk reaches the fetcher that reads a registry server, and stops at its lazy import.
    expect(loaded).toContain(join(src, 'catalog/content/grpc.ts'));
    expect(hasPackage(loaded, '@grpc/grpc-js')).toBe(false);
    expect(hasPackage(loaded, 'protobufjs')).toBe(false);
    expect(loaded).not.toContain(join(src, 'catalog/grpc/fetch.ts'));
  });

  it('loads no certificate library until a certificate is issued', async () => {
    const loaded = await modulesLoadedBy(join(src, 'manager/manager.ts'));
    // The walk reaches the module that issues certificates, and stops at its lazy import.
    expect(loaded).toContain(join(src, 'install/certificates.ts'));
    expect(hasPackage(loaded, '@peculiar/x509')).toBe(false);
    expect(hasPackage(loaded, 'reflect-metadata')).toBe(false);
  });

  it('loads no Markdown renderer until a package page is served', async () => {
    const loaded = await modulesLoadedBy(join(src, 'manager/manager.ts'));
    // The walk reaches the web catalog, which imports the renderer only where it renders a page.
    expect(loaded).toContain(join(src, 'web/server.ts'));
    expect(loaded).toContain(join(src, 'web/first-paragraph.ts'));
    expect(hasPackage(loaded, 'marked')).toBe(false);
    expect(hasPackage(loaded, 'sanitize-html')).toBe(false);
    expect(loaded).not.toContain(join(src, 'web/markdown.ts'));
  });
});
