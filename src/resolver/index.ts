/**
 * The resolver: catalogs + cluster state + Subscriptions of one namespace → the bundles to
 * install, or an explanation of why not. Pure; see `resolve`.
 */
export { type CatalogIndex, indexCatalog } from './catalog-index.js';
export { explainText, failureText, ruleOutText, summarize } from './render.js';
export { DEFAULT_MAX_STEPS, resolve } from './resolve.js';
export * from './types.js';
