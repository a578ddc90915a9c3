#!/usr/bin/env node
// The warren command. Sources are TypeScript, loaded through tsx so the checkout runs
// as-is right after `npm install`, with no build step to forget.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv);
