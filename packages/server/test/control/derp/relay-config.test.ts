import { describe, expect, it } from 'vitest';
import { serveConfig } from '../../../src/config.js';
import { embeddedRegion } from '../../../src/control/derp/derp-map.js';

describe('relay settings', () => {
  it('is off unless --derp or WARREN_DERP asks for it', () => {
    expect(serveConfig({}, {}).derp).toBeUndefined();
    expect(serveConfig({ derp: true }, {}).derp).toEqual({ stunPort: 3478 });
    expect(serveConfig({}, { WARREN_DERP: '1', WARREN_DERP_STUN_PORT: '3479' }).derp).toEqual({ stunPort: 3479 });
    expect(serveConfig({ derp: true, derpStunPort: 'off' }, {}).derp).toEqual({ stunPort: null });
    expect(() => serveConfig({ derp: true, derpStunPort: '70000' }, {})).toThrow(/--derp-stun-port/);
  });

  it('puts the relay in the DERP map at the public URL, with an address host named as such', () => {
    expect(embeddedRegion({ publicUrl: 'https://warren.example.com', stunPort: 3478 })).toEqual({
      RegionID: 900,
      RegionCode: 'warren',
      RegionName: 'Warren embedded relay',
      Nodes: [{ Name: '900a', RegionID: 900, HostName: 'warren.example.com', DERPPort: 443, STUNPort: 3478 }],
    });
    const lab = embeddedRegion({ publicUrl: 'http://192.0.2.1:8080', stunPort: undefined });
    expect(lab.Nodes[0]).toMatchObject({ HostName: '192.0.2.1', IPv4: '192.0.2.1', DERPPort: 8080, STUNPort: -1 });
    expect(embeddedRegion({ publicUrl: 'http://[2001:db8::1]', stunPort: 1 }).Nodes[0]).toMatchObject({
      IPv6: '2001:db8::1',
      DERPPort: 80,
    });
  });
});
