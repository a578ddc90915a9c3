/**
 * `/api/v2`: the subset of Tailscale's public API that its Go client and Terraform provider use
 * for devices, keys, policy, users and settings, as a thin adapter over the same services as
 * /v1. The pipeline is the same (authentication, rate limit, scope, audit entry per call); what
 * differs is the wire: Tailscale's paths, field names and error body, its Basic spelling of
 * an API key (http/authenticate.ts), and OAuth clients' access tokens (oauth.routes.ts). Any other path under /api/v2 is 404 in Tailscale's shape.
 * Not part of the /v1 OpenAPI document (docs/TAILSCALE.md describes it).
 */
import type { FastifyInstance } from 'fastify';
import { readEveryBodyAsJson } from '../bodies.js';
import { keptJsonSerializer } from '../serializers.js';
import { tailscaleDeviceRoutes } from './devices.routes.js';
import { registerTailscaleErrors } from './errors.js';
import { tailscaleKeyRoutes } from './keys.routes.js';
import { tailscaleOAuthRoutes } from './oauth.routes.js';
import { tailscalePolicyRoutes } from './policy.routes.js';
import { tailscaleSettingsRoutes } from './settings.routes.js';
import { tailscaleUserRoutes } from './users.routes.js';

export async function tailscaleApi(app: FastifyInstance): Promise<void> {
  registerTailscaleErrors(app);
  // No route here declares a response schema: kept answers (lib/kept.ts) are written once. A
  // reply serializer would take precedence over a response schema, so one is refused here.
  app.addHook('onRoute', (route) => {
    if (route.schema?.response) {
      throw new Error(`${route.url}: /api/v2 answers are written by keptJsonSerializer, not a response schema`);
    }
  });
  app.setReplySerializer(keptJsonSerializer());
  // The JSON areas read a body as JSON whatever its type says, as Tailscale does (bodies.ts).
  await app.register(async (json) => {
    readEveryBodyAsJson(json);
    await json.register(tailscaleDeviceRoutes);
    await json.register(tailscaleKeyRoutes);
    await json.register(tailscaleUserRoutes);
    await json.register(tailscaleSettingsRoutes);
  });
  // Its form parser and OAuth's error body stay inside its own encapsulated context.
  await app.register(tailscaleOAuthRoutes);
  // Last: its text body parser stays inside its own encapsulated context.
  await app.register(tailscalePolicyRoutes);
}
