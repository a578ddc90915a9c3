/**
 * Every operation of the committed OpenAPI document is reachable from the command line, or is
 * named below as one it leaves to other tools, with the reason: a new endpoint without its
 * command turns this red. The table says which command calls each operation.
 */
import { openApiOperationIds } from '@warren/server/testing';
import { describe, expect, it } from 'vitest';
import { warren } from './run.js';

const COMMANDS: Record<string, string> = {
  getNetwork: 'network',
  updateNetwork: 'network set',
  getMe: 'whoami',
  getSso: 'sso get',
  setSso: 'sso set',
  listUsers: 'users list',
  createUser: 'users add',
  updateUser: 'users set-role', // and users suspend, users restore
  deleteUser: 'users remove',
  listKeys: 'keys list',
  createKey: 'keys create',
  getKey: 'keys get',
  deleteKey: 'keys delete',
  getPolicy: 'acl get',
  setPolicy: 'acl apply',
  validatePolicy: 'acl validate',
  listPolicyHistory: 'acl history',
  getPolicyVersion: 'acl history', // with a VERSION
  listDevices: 'devices list',
  getDevice: 'devices get',
  deleteDevice: 'devices delete',
  setDeviceTags: 'devices tag',
  updateDevice: 'devices set',
  approveDevice: 'devices approve',
  expireDevice: 'devices expire',
  listRoutes: 'routes list',
  approveRoute: 'routes approve',
  disableRoute: 'routes disable',
  listConnectionLog: 'logs connections',
  listAuditLog: 'logs audit',
  listEvents: 'events',
  listWebhooks: 'webhooks list',
  createWebhook: 'webhooks create',
  getWebhook: 'webhooks get',
  updateWebhook: 'webhooks update',
  deleteWebhook: 'webhooks delete',
  rotateWebhookSecret: 'webhooks rotate',
  testWebhook: 'webhooks test',
  listWebhookDeliveries: 'webhooks deliveries',
  retryWebhookDelivery: 'webhooks retry',
  // The device protocol: spoken by the agent (node up, node simulate), not called one by one.
  registerNode: 'node up',
  heartbeat: 'node up',
  disconnectNode: 'node up',
  getNetmap: 'node up',
  reportConnections: 'node up',
};

describe('warren: every API operation has its command', () => {
  it('the table names a command for every operation of the OpenAPI document, and no other', () => {
    const ids = openApiOperationIds();
    expect(ids.filter((id) => !(id in COMMANDS))).toEqual([]);
    expect(Object.keys(COMMANDS).filter((id) => !ids.includes(id))).toEqual([]);
  });

  it('each of those commands exists and has its help', async () => {
    for (const command of new Set(Object.values(COMMANDS))) {
      const res = await warren([...command.split(' '), '--help'], {});
      expect(res.code, command).toBe(0);
      expect(res.stdout, command).toContain(`Usage: warren ${command}`);
    }
  });
});
