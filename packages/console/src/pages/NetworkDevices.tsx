/** The network's device settings: approval of new devices, how long a login lasts, flow logs. */
import type { NetworkBody } from '@warren/contract';
import { Field, onOff, SettingsForm, useSectionSave } from './settings-form.tsx';

export function DeviceSettings({ network, editable }: { network: NetworkBody; editable: boolean }) {
  const save = useSectionSave(network);
  const filled = save.network;
  return (
    <>
      <h2 id="device-settings">Devices</h2>
      {editable ? (
        <SettingsForm
          key={save.key}
          labelledBy="device-settings"
          saveLabel="Save device settings"
          save={save}
          loaded={{
            deviceApproval: filled.deviceApproval,
            nodeKeyExpiry: filled.nodeKeyExpiry,
            flowLogs: filled.flowLogs,
          }}
          request={(form) => ({
            deviceApproval: form.get('deviceApproval') === 'on',
            nodeKeyExpiry: String(form.get('nodeKeyExpiry')).trim(),
            flowLogs: form.get('flowLogs') === 'on',
          })}
        >
          <Field hint="New devices wait, with no peers, until someone approves them. Devices already in stay approved.">
            {(hint) => (
              <label>
                <input
                  name="deviceApproval"
                  type="checkbox"
                  defaultChecked={filled.deviceApproval}
                  aria-describedby={hint}
                />{' '}
                Approve new devices before they join
              </label>
            )}
          </Field>
          <Field hint="A duration such as 180d or 12h (at most 365d), or 0 for never. Applies to logins made from now on.">
            {(hint) => (
              <label>
                Node key expiry
                <input name="nodeKeyExpiry" required defaultValue={filled.nodeKeyExpiry} aria-describedby={hint} />
              </label>
            )}
          </Field>
          <Field hint="Tailscale clients report their connections to the connection log.">
            {(hint) => (
              <label>
                <input name="flowLogs" type="checkbox" defaultChecked={filled.flowLogs} aria-describedby={hint} /> Log
                network flows
              </label>
            )}
          </Field>
        </SettingsForm>
      ) : (
        <dl className="facts">
          <dt>Device approval</dt>
          <dd>{network.deviceApproval ? 'on: new devices wait until approved' : 'off'}</dd>
          <dt>Node key expiry</dt>
          <dd>{network.nodeKeyExpiry === '0' ? 'never' : network.nodeKeyExpiry}</dd>
          <dt>Flow logs</dt>
          <dd>{onOff(network.flowLogs)}</dd>
        </dl>
      )}
    </>
  );
}
