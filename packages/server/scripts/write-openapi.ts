/**
 * Writes docs/openapi.json from the route schemas. The document is committed so a change
 * to the API shows up in review; a test fails when it drifts from the code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from './openapi-document.js';

const target = join(import.meta.dirname, '..', '..', '..', 'docs', 'openapi.json');
writeFileSync(target, await openApiDocument());
process.stdout.write(`wrote ${target}\n`);
