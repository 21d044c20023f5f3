/**
 * Node's compile cache for the dependencies each test file loads. Every integration test file
 * runs in a fresh worker, which loads the same packages from node_modules again (vitest hands
 * them to Node unchanged): @kubernetes/client-node alone took 2.5 to 3 s to compile each time on
 * a loaded two-core machine, 0.8 s from the cache. Vitest does not turn the cache on for its
 * workers; bin/bosun.js does the same for the command. Only how Node compiles the code changes,
 * never what runs. Left off when vitest asks for it off (v8 coverage needs the source positions
 * a cached script lacks).
 */
import { enableCompileCache } from 'node:module';

if (!process.env.NODE_DISABLE_COMPILE_CACHE) enableCompileCache();
