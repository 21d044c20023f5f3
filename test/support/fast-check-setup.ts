import { vi } from 'vitest';
import { configureProperties, runs } from './properties.js';

configureProperties();
// Exploring runs properties many times longer; the usual per-test timeout grows with them.
const { numRuns } = runs(100);
if (numRuns > 100) vi.setConfig({ testTimeout: 60_000 * (numRuns / 100) });
