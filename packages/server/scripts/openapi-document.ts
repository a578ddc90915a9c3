/** The OpenAPI document as committed: generated on an in-memory database, pretty-printed. */
import { buildApp } from '../src/app.js';
import { openStorage } from '../src/storage/database.js';

export async function openApiDocument(): Promise<string> {
  const storage = await openStorage('sqlite::memory:');
  const app = await buildApp({ storage });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await storage.close();
  return text;
}
