/**
 * A role is one of the contract's six, checked by the request schemas themselves: a bad role
 * is a 400 invalid_request naming every role, before any handler runs, and changes nothing.
 */
import { ROLES } from '@warren/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

const EVERY_ROLE = ROLES.map((role) => JSON.stringify(role)).join(', ');

describe('roles', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const users = async () => (await json(await server.call('GET', '/v1/users'))).users;
  const events = async () => (await json(await server.call('GET', '/v1/events?since=1h'))).entries;

  it.each(['superuser', 'Admin', '', 'owner '])('refuses to create a user with role %j', async (role) => {
    const [before, eventsBefore] = [await users(), await events()];
    const res = await server.call('POST', '/v1/users', { body: { loginName: 'x@example.com', role } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(res);
    expect(problem.code).toBe('invalid_request');
    expect(problem.detail).toBe(`body field "role" must be one of ${EVERY_ROLE}`);
    expect(await users()).toEqual(before);
    expect(await events()).toEqual(eventsBefore);
  });

  it('refuses to change a user to an unknown role and leaves the user as it was', async () => {
    const ana = await json(
      await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com', role: 'auditor' } }),
    );
    const res = await server.call('PATCH', `/v1/users/${ana.id}`, { body: { role: 'root', displayName: 'Root' } });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({
      code: 'invalid_request',
      detail: `body field "role" must be one of ${EVERY_ROLE}`,
    });
    const after = await json(await server.call('GET', '/v1/users?role=auditor'));
    expect(after.users).toEqual([ana]);
  });

  it('refuses an unknown role as a list filter and accepts each of the six', async () => {
    const res = await server.call('GET', '/v1/users?role=superuser');
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_request' });
    for (const role of ROLES) expect((await server.call('GET', `/v1/users?role=${role}`)).status).toBe(200);
  });

  it('publishes the six roles in the OpenAPI document of every request that takes one', async () => {
    const doc = await json(await server.call('GET', '/v1/openapi.json'));
    const users = doc.paths['/v1/users'];
    const bodyRole = (operation: any) => operation.requestBody.content['application/json'].schema.properties.role;
    // The document writes each literal as a one-value enum (OpenAPI 3.0 readers know no const).
    const allowed = (schema: any) =>
      schema.anyOf.flatMap((member: { enum?: string[]; const?: string }) => member.enum ?? [member.const]);
    expect(allowed(bodyRole(users.post))).toEqual([...ROLES]);
    expect(allowed(bodyRole(doc.paths['/v1/users/{id}'].patch))).toEqual([...ROLES]);
    const filter = users.get.parameters.find((p: { name: string }) => p.name === 'role');
    expect(allowed(filter.schema)).toEqual([...ROLES]);
  });
});
