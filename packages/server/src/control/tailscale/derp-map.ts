/**
 * The DERP map sent to Tailscale clients: the embedded relay when `warren serve --derp` runs it
 * (control/derp/), else the regions the server was configured with (`WARREN_DERP_MAP`, a file
 * holding a tailcfg.DERPMap as JSON), else none. Without a relay, clients on one network still
 * reach each other directly through the endpoints they report.
 */
import type { FastifyInstance } from 'fastify';

export function derpMap(app: Pick<FastifyInstance, 'ctx' | 'embeddedRelay'>): unknown {
  const region = app.embeddedRelay?.region();
  if (region) return { Regions: { [region.RegionID]: region } };
  return app.ctx.settings.derpMap ?? { Regions: {} };
}
