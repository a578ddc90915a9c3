import { type Static, Type } from 'typebox';

/**
 * A region of a Tailscale DERP map (tailcfg.DERPRegion), in Tailscale's own field names: the
 * fields Warren checks are named, the others (`DERPPort`, `STUNPort`, `IPv4`, `CanPort80`, …) are
 * passed to clients as given.
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
