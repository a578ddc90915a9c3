/**
 * The network's relays: whether the embedded DERP relay is in the map, and custom regions,
 * edited as the JSON of Tailscale's DERP map regions (tailcfg.DERPRegion, which has more fields
 * than a form would sensibly hold; the server checks them and names what is wrong).
 */
import type { NetworkBody } from '@warren/contract';
import { Field, SettingsForm, useSectionSave } from './settings-form.tsx';

export function RelaySettings({ network, editable }: { network: NetworkBody; editable: boolean }) {
  const { derp } = network;
  const save = useSectionSave(network);
  const filled = save.network.derp;
  return (
    <>
      <h2 id="relay-settings">Relays</h2>
      {editable ? (
        <SettingsForm
          key={save.key}
          labelledBy="relay-settings"
          saveLabel="Save relay settings"
          save={save}
          loaded={{ derp: filled }}
          request={(form) => ({
            derp: { embedded: form.get('embedded') === 'on', regions: regionsOf(String(form.get('regions'))) },
          })}
        >
          <Field hint="When the server runs one (warren serve --derp), as region 900.">
            {(hint) => (
              <label>
                <input name="embedded" type="checkbox" defaultChecked={filled.embedded} aria-describedby={hint} />{' '}
                Embedded relay in the DERP map
              </label>
            )}
          </Field>
          <Field hint="A JSON list of Tailscale DERP map regions: RegionID, RegionCode and Nodes of Name, RegionID, HostName, with Tailscale's other fields (DERPPort, STUNPort, IPv4, …) as its client types them. Empty: none.">
            {(hint) => (
              <label className="wide">
                Custom regions (JSON)
                <textarea
                  name="regions"
                  rows={Math.min(20, Math.max(4, JSON.stringify(filled.regions, null, 2).split('\n').length))}
                  spellCheck={false}
                  defaultValue={filled.regions.length ? JSON.stringify(filled.regions, null, 2) : ''}
                  aria-describedby={hint}
                />
              </label>
            )}
          </Field>
        </SettingsForm>
      ) : (
        <dl className="facts">
          <dt>Embedded relay</dt>
          <dd>{derp.embedded ? 'in the DERP map when the server runs one' : 'not in the DERP map'}</dd>
          <dt>Custom regions</dt>
          <dd>
            {derp.regions.length === 0 ? (
              'none'
            ) : (
              <ul className="plain">
                {derp.regions.map((r) => (
                  <li key={r.RegionID}>
                    {r.RegionID} {r.RegionCode}
                    {r.RegionName && ` (${r.RegionName})`}: {r.Nodes.map((n) => n.HostName).join(', ')}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </dl>
      )}
    </>
  );
}

/** The textarea's regions; the server checks their shape, the console only that it reads as JSON. */
function regionsOf(text: string): NonNullable<NetworkBody['derp']['regions']> {
  if (!text.trim()) return [];
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`Custom regions are not valid JSON: ${(error as Error).message}`);
  }
}
