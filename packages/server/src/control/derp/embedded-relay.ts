/**
 * `warren serve --derp`: the relay, its STUN responder and its HTTP routes, started with the app
 * and stopped with it. Its key is derived from the server secret, so every instance sharing a
 * database presents the same relay key. Each instance relays only between the devices connected
 * to it (no regional mesh): with several instances, devices that need the relay must reach the
 * same one — see docs/TAILSCALE.md.
 */
import type { FastifyInstance } from 'fastify';
import { deriveKey, loadServerSecret } from '../../lib/server-secret.js';
import { isEnrolledNodeKey } from '../../modules/devices/devices.repository.js';
import type { UpgradeHandler } from '../upgrades.js';
import { derpRoutes } from './derp.routes.js';
import { type DerpRegion, embeddedRegion } from './derp-map.js';
import { DerpRelay } from './relay.js';
import { relayUpgrade } from './relay-upgrade.js';
import { type StunServer, startStun } from './stun.js';

export interface EmbeddedRelayOptions {
  /** UDP port of the STUN responder (3478 by default; 0: any free port; null: no STUN). */
  stunPort?: number | null;
  /** How long a connection may take to say hello after its upgrade (10 s by default). */
  handshakeTimeoutMs?: number;
}

export interface EmbeddedRelay {
  relay: DerpRelay;
  /** The relay as a DERP map region, at the server's public URL or the address it listens on. */
  region(): DerpRegion;
  upgrade: UpgradeHandler;
  /** Starts the STUN responder on the host the server listens on (after it listens). */
  listenStun(host: string): Promise<void>;
}

export async function startEmbeddedRelay(app: FastifyInstance, options: EmbeddedRelayOptions): Promise<EmbeddedRelay> {
  const { ctx } = app;
  const secret = await loadServerSecret(ctx.db);
  const relay = new DerpRelay({
    privateKey: deriveKey(secret, 'derp-relay-key-v1'),
    admit: (nodeKey) => isEnrolledNodeKey(ctx.db, nodeKey),
    log: app.log,
    ...(options.handshakeTimeoutMs ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
  });
  await app.register(derpRoutes);
  let stun: StunServer | undefined;
  app.addHook('preClose', async () => {
    relay.close();
    await stun?.close();
  });
  return {
    relay,
    upgrade: relayUpgrade(relay),
    async listenStun(host) {
      const port = options.stunPort === undefined ? 3478 : options.stunPort;
      if (port !== null && !stun) stun = await startStun(host, port);
    },
    region: () => embeddedRegion({ publicUrl: ctx.settings.publicUrl ?? listeningUrl(app), stunPort: stun?.port }),
  };
}

function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (typeof address !== 'object' || !address) return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The embedded relay when `warren serve --derp` runs one, else null. */
    embeddedRelay: EmbeddedRelay | null;
  }
}
