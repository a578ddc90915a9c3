import { type Static, Type } from 'typebox';

/**
 * A region of a Tailscale DERP map (tailcfg.DERPRegion) as GET /v1/network shows it, in
 * Tailscale's own field names. Loose on purpose: it also shows regions stored before
 * DerpRegionSetting checked every field, which the response must not fail on.
 */
export const DerpRegion = Type.Object(
  {
    RegionID: Type.Integer({ minimum: 1, maximum: 999_999 }),
    RegionCode: Type.String({ minLength: 1, maxLength: 32 }),
    RegionName: Type.Optional(Type.String({ maxLength: 128 })),
    Nodes: Type.Array(
      Type.Object(
        {
          Name: Type.String({ minLength: 1, maxLength: 64 }),
          RegionID: Type.Integer({ minimum: 1, maximum: 999_999 }),
          HostName: Type.String({ minLength: 1, maxLength: 253 }),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 32 },
    ),
  },
  { additionalProperties: true, description: 'a region of a Tailscale DERP map (tailcfg.DERPRegion)' },
);
export type DerpRegionBody = Static<typeof DerpRegion>;

const closed = { additionalProperties: false } as const;
const RegionId = Type.Integer({ minimum: 1, maximum: 999_999 });

/**
 * A node of a region as PATCH /v1/network takes it: every field of tailcfg.DERPNode (Tailscale
 * v1.102), typed as the client decodes it. Every Tailscale client of the network decodes the
 * DERP map in each map response, so one value of the wrong type (`"DERPPort": "443"`) would make
 * every client refuse its map: such a value, or a field tailcfg does not have, is refused here.
 * What the types cannot say (a host name, addresses of the right family, names unique across
 * regions) the server checks (modules/network/dns-derp-settings.ts).
 */
const DerpNodeSetting = Type.Object(
  {
    Name: Type.String({ minLength: 1, maxLength: 64, description: 'unique across every region, e.g. "1a"' }),
    RegionID: RegionId,
    HostName: Type.String({ minLength: 1, maxLength: 253, description: 'a DNS name or an IP address' }),
    CertName: Type.Optional(Type.String({ maxLength: 253 })),
    IPv4: Type.Optional(Type.String({ maxLength: 15, description: 'an IPv4 address, or "none"' })),
    IPv6: Type.Optional(Type.String({ maxLength: 45, description: 'an IPv6 address, or "none"' })),
    STUNPort: Type.Optional(Type.Integer({ minimum: -1, maximum: 65_535, description: '0: 3478; -1: no STUN' })),
    STUNOnly: Type.Optional(Type.Boolean()),
    DERPPort: Type.Optional(Type.Integer({ minimum: 0, maximum: 65_535, description: '0: 443' })),
    InsecureForTests: Type.Optional(Type.Boolean()),
    STUNTestIP: Type.Optional(Type.String({ maxLength: 45 })),
    CanPort80: Type.Optional(Type.Boolean()),
  },
  closed,
);

/** A region as PATCH /v1/network takes it: every field of tailcfg.DERPRegion, typed (see DerpNodeSetting). */
export const DerpRegionSetting = Type.Object(
  {
    RegionID: RegionId,
    RegionCode: Type.String({ minLength: 1, maxLength: 32 }),
    RegionName: Type.Optional(Type.String({ maxLength: 128 })),
    Latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
    Longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
    Avoid: Type.Optional(Type.Boolean()),
    NoMeasureNoHome: Type.Optional(Type.Boolean()),
    Nodes: Type.Array(DerpNodeSetting, { minItems: 1, maxItems: 32 }),
  },
  { ...closed, description: 'a region of a Tailscale DERP map (tailcfg.DERPRegion)' },
);
export type DerpRegionSettingBody = Static<typeof DerpRegionSetting>;
