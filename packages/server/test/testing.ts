/**
 * What the other packages' tests use of the server's test kit, reached by its package name
 * (`@warren/server/testing`, resolved only under the `@warren/source` condition the test
 * runner sets), so no test reaches into another package's files by a relative path. The
 * server's own tests import these files directly.
 */
export { applyPolicy, defineTags } from './acl/helpers.js';
export { newNodeKey } from './devices/helpers.js';
export { backend, json, startServer, type TestServer } from './harness.js';
export { addDevice, apiKey, entry, report, type TestDevice } from './logs/helpers.js';
export { type Enrolled, enroll } from './node-enroll.js';
export { openApiOperationIds } from './openapi-operations.js';
export { Receiver, waitFor } from './webhooks/receiver.js';
