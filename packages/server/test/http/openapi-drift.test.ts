import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi-document.js';

describe('docs/openapi.json', () => {
  it('matches the routes (run `npm run openapi` after changing an endpoint)', async () => {
    const committed = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'openapi.json'), 'utf8');
    expect(JSON.parse(committed)).toEqual(JSON.parse(await openApiDocument()));
  });

  it('names every operation with a unique operationId, which the client libraries are checked against', async () => {
    const document = JSON.parse(await openApiDocument()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        at: `${method.toUpperCase()} ${path}`,
        id: operation.operationId,
      })),
    );
    expect(operations.filter((operation) => !operation.id).map((operation) => operation.at)).toEqual([]);
    const ids = operations.map((operation) => operation.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
