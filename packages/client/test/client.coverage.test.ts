/**
 * Every operation of the committed OpenAPI document has a client method: a new endpoint
 * without its method turns this red. The table names where each operation lives.
 */
import { openApiOperationIds } from '@warren/server/testing';
import { describe, expect, it } from 'vitest';
import { NodeClient, Warren } from '../src/index.js';

const METHODS: Record<string, string> = {
  getNetwork: 'network.get',
  updateNetwork: 'network.update',
  getMe: 'network.me',
  getSso: 'network.sso',
  setSso: 'network.setSso',
  listUsers: 'users.list',
  createUser: 'users.create',
  updateUser: 'users.update',
  deleteUser: 'users.delete',
  listKeys: 'keys.list',
  createKey: 'keys.create',
  getKey: 'keys.get',
  deleteKey: 'keys.delete',
  getPolicy: 'acl.get',
  setPolicy: 'acl.set',
  validatePolicy: 'acl.validate',
  listPolicyHistory: 'acl.history',
  getPolicyVersion: 'acl.version',
  listDevices: 'devices.list',
  getDevice: 'devices.get',
  deleteDevice: 'devices.delete',
  setDeviceTags: 'devices.setTags',
  updateDevice: 'devices.update',
  approveDevice: 'devices.approve',
  expireDevice: 'devices.expire',
  listRoutes: 'routes.list',
  approveRoute: 'routes.approve',
  disableRoute: 'routes.disable',
  listConnectionLog: 'logs.connections',
  listAuditLog: 'logs.audit',
  listEvents: 'events.list',
  listWebhooks: 'webhooks.list',
  createWebhook: 'webhooks.create',
  getWebhook: 'webhooks.get',
  updateWebhook: 'webhooks.update',
  deleteWebhook: 'webhooks.delete',
  rotateWebhookSecret: 'webhooks.rotate',
  testWebhook: 'webhooks.test',
  listWebhookDeliveries: 'webhooks.deliveries',
  retryWebhookDelivery: 'webhooks.retry',
  registerNode: 'node.register',
  heartbeat: 'node.heartbeat',
  disconnectNode: 'node.disconnect',
  getNetmap: 'node.netmap',
  reportConnections: 'node.reportConnections',
};

describe('client coverage of docs/openapi.json', () => {
  const roots: Record<string, unknown> = {
    ...new Warren({ url: 'http://127.0.0.1:1', apiKey: 'wrn_api_unused' }),
    node: new NodeClient({ url: 'http://127.0.0.1:1' }),
  };

  it('has a method for every operation of the document, and no entry for an operation that is gone', () => {
    const documented = openApiOperationIds();
    expect(
      documented.filter((id) => !(id in METHODS)),
      'operations without a client method',
    ).toEqual([]);
    expect(
      Object.keys(METHODS).filter((id) => !documented.includes(id)),
      'methods of removed operations',
    ).toEqual([]);
  });

  it.each(Object.entries(METHODS))('%s is implemented by %s', (_operation, where) => {
    const [area, method] = where.split('.') as [string, string];
    const target = roots[area] as Record<string, unknown> | undefined;
    expect(typeof target?.[method]).toBe('function');
  });
});
