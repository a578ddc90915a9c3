import { describe, expect, it } from 'vitest';
import { newRequestId } from '../../src/http/request-id.js';

describe('request ids', () => {
  it('stay unique and well formed across refills of the random pool', () => {
    const ids = Array.from({ length: 2000 }, newRequestId);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
