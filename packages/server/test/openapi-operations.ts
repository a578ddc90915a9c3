/** The operation ids of the committed OpenAPI document, for the tests that check a client covers each. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function openApiOperationIds(): string[] {
  const path = join(import.meta.dirname, '..', '..', '..', 'docs', 'openapi.json');
  const document = JSON.parse(readFileSync(path, 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
}
