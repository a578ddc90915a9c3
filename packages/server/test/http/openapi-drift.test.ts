import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi-document.js';

describe('docs/openapi.json', () => {
  it('matches the routes (run `npm run openapi` after changing an endpoint)', async () => {
    const committed = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'openapi.json'), 'utf8');
    expect(JSON.parse(committed)).toEqual(JSON.parse(await openApiDocument()));
  });
});
