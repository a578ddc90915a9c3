/**
 * The network's DNS settings as Tailscale clients get them: the MagicDNS domain, nameservers,
 * search domains, split DNS (a domain → its resolvers) and extra records the clients answer.
 */
import { type DnsRecordBody, dnsDomain, type NetworkBody, type PatchNetworkRequest } from '@warren/contract';
import { RowList, useRows } from './row-list.tsx';
import { Field, onOff, type SectionSave, SettingsForm, useSectionSave, words } from './settings-form.tsx';

type Dns = NonNullable<PatchNetworkRequest['dns']>;

export function DnsSettings({ network, editable }: { network: NetworkBody; editable: boolean }) {
  const { dns } = network;
  const fallback = dnsDomain(network.name);
  const save = useSectionSave(network);
  return (
    <>
      <h2 id="dns-settings">DNS</h2>
      {editable ? (
        // Keyed by the save, so its rows are filled afresh from the server's answer.
        <DnsForm key={save.key} save={save} fallback={fallback} />
      ) : (
        <dl className="facts">
          <dt>DNS domain</dt>
          <dd>
            {dns.domain}
            {dns.domain === fallback && ' (the default)'}
          </dd>
          <dt>MagicDNS</dt>
          <dd>{onOff(dns.magicDns)}</dd>
          <dt>Nameservers</dt>
          <dd>{dns.nameservers.join(', ') || "none: each device's own"}</dd>
          <dt>Search domains</dt>
          <dd>{dns.searchDomains.join(', ') || 'none'}</dd>
          <dt>Split DNS</dt>
          <dd>
            {Object.keys(dns.splitDns).length === 0 ? (
              'none'
            ) : (
              <ul className="plain">
                {Object.entries(dns.splitDns).map(([domain, nameservers]) => (
                  <li key={domain}>
                    {domain} → {nameservers.join(', ') || 'answered by the devices (extra records)'}
                  </li>
                ))}
              </ul>
            )}
          </dd>
          <dt>Extra records</dt>
          <dd>
            {dns.extraRecords.length === 0 ? (
              'none'
            ) : (
              <ul className="plain">
                {dns.extraRecords.map((r) => (
                  <li key={`${r.name} ${r.type} ${r.value}`}>
                    {r.name} {r.type} {r.value}
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

interface Route {
  domain: string;
  nameservers: string;
}

function DnsForm({ save, fallback }: { save: SectionSave; fallback: string }) {
  const { dns } = save.network;
  const routes = useRows<Route>(() =>
    Object.entries(dns.splitDns).map(([domain, nameservers]) => ({ domain, nameservers: nameservers.join(' ') })),
  );
  const records = useRows<DnsRecordBody>(() => dns.extraRecords);

  const request = (form: FormData): PatchNetworkRequest => {
    const splitDns: Dns['splitDns'] = {};
    for (const r of routes.rows) {
      const domain = r.domain.trim();
      if (!domain && !r.nameservers.trim()) continue; // a row added and left empty
      if (domain in splitDns) throw new Error(`Split DNS: ${domain} is given twice`);
      splitDns[domain] = words(r.nameservers);
    }
    return {
      dns: {
        // Empty: back to the default. Sent only when changed (as every field is), so a network
        // left on its default keeps following its name.
        domain: String(form.get('domain')).trim() || null,
        magicDns: form.get('magicDns') === 'on',
        nameservers: words(form.get('nameservers')),
        searchDomains: words(form.get('searchDomains')),
        splitDns,
        extraRecords: records.rows
          .filter((r) => r.name.trim() || r.value.trim())
          .map((r) => ({ name: r.name.trim(), type: r.type, value: r.value.trim() })),
      },
    };
  };

  return (
    <SettingsForm
      labelledBy="dns-settings"
      saveLabel="Save DNS settings"
      save={save}
      loaded={{ dns }}
      request={request}
    >
      {(edited) => (
        <>
          <Field hint={`Devices are <name>.<domain>. Empty: the default, ${fallback}.`}>
            {(hint) => (
              <label>
                DNS domain
                <input name="domain" defaultValue={dns.domain} aria-describedby={hint} />
              </label>
            )}
          </Field>
          <Field hint="Tailscale clients answer their peers' names themselves.">
            {(hint) => (
              <label>
                <input name="magicDns" type="checkbox" defaultChecked={dns.magicDns} aria-describedby={hint} /> MagicDNS
              </label>
            )}
          </Field>
          <Field hint="IP addresses of the resolvers for every other name, separated by spaces.">
            {(hint) => (
              <label>
                Nameservers
                <input name="nameservers" defaultValue={dns.nameservers.join(' ')} aria-describedby={hint} />
              </label>
            )}
          </Field>
          <Field hint="Domains searched after the DNS domain, separated by spaces.">
            {(hint) => (
              <label>
                Search domains
                <input name="searchDomains" defaultValue={dns.searchDomains.join(' ')} aria-describedby={hint} />
              </label>
            )}
          </Field>
          <RowList
            legend="Split DNS"
            what="split DNS route"
            addLabel="Add a split DNS domain"
            list={routes}
            blank={{ domain: '', nameservers: '' }}
            edited={edited}
            intro={
              <p className="subtle wide">
                Names under a domain go to its nameservers; with none, the devices answer them from the extra records.
              </p>
            }
          >
            {(r, label) => (
              <>
                <label>
                  {label('Domain')}
                  <input value={r.domain} onChange={(e) => routes.change(r.key, { domain: e.target.value })} />
                </label>
                <label>
                  {label('Nameservers')}
                  <input
                    value={r.nameservers}
                    onChange={(e) => routes.change(r.key, { nameservers: e.target.value })}
                  />
                </label>
              </>
            )}
          </RowList>
          <RowList
            legend="Extra records"
            what="record"
            addLabel="Add a record"
            list={records}
            blank={{ name: '', type: 'A', value: '' }}
            edited={edited}
          >
            {(r, label) => (
              <>
                <label>
                  {label('Name')}
                  <input value={r.name} onChange={(e) => records.change(r.key, { name: e.target.value })} />
                </label>
                <label>
                  {label('Type')}
                  <select
                    value={r.type}
                    onChange={(e) => records.change(r.key, { type: e.target.value as DnsRecordBody['type'] })}
                  >
                    <option>A</option>
                    <option>AAAA</option>
                  </select>
                </label>
                <label>
                  {label('Value')}
                  <input value={r.value} onChange={(e) => records.change(r.key, { value: e.target.value })} />
                </label>
              </>
            )}
          </RowList>
        </>
      )}
    </SettingsForm>
  );
}
