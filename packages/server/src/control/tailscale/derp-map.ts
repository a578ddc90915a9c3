/**
 * The DERP map sent to Tailscale clients, from the network's relay settings (`derp` of
 * PATCH /v1/network): the embedded relay when `warren serve --derp` runs it and `embedded` is
 * on (control/derp/), plus the network's `regions`. A network with no regions of its own gets
 * the regions the server was started with (`WARREN_DERP_MAP`, a file holding a
 * tailcfg.DERPMap as JSON) when no embedded relay is in the map. Without a relay, clients on one
 * network still reach each other directly through the endpoints they report.
 */
import type { FastifyInstance } from 'fastify';
import type { DerpSettings } from '../../modules/network/dns-derp-settings.js';

interface DerpMap {
  Regions: Record<string, unknown>;
}

export function derpMap(app: Pick<FastifyInstance, 'ctx' | 'embeddedRelay'>, settings: DerpSettings): DerpMap {
  const map: DerpMap = { Regions: {} };
  const embedded = settings.embedded ? app.embeddedRelay?.region() : undefined;
  if (embedded) map.Regions[embedded.RegionID] = embedded;
  if (settings.regions.length > 0) {
    for (const region of settings.regions) map.Regions[region.RegionID] = region;
  } else if (!embedded) {
    Object.assign(map.Regions, (app.ctx.settings.derpMap as DerpMap | undefined)?.Regions);
  }
  return map;
}
