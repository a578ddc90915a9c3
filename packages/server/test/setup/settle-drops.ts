/**
 * Setup file of the PostgreSQL projects: a test's database is dropped while the next tests run,
 * and the file ends only once all of its databases are gone (see ../database-drops.ts).
 */
import { afterAll } from 'vitest';
import { deferDrops, settleDrops } from '../database-drops.js';

deferDrops();
afterAll(settleDrops);
