#!/usr/bin/env node
// The `bosun` command runs from the JavaScript that `npm ci` compiles (the `prepare` script).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
