// Starts policy.worker.ts from its TypeScript source (tests and tsx scripts run the server from
// src/, where no compiled worker sits beside the pool); builds run the compiled worker instead.
import { register } from 'tsx/esm/api';

register();
await import('./policy.worker.ts');
