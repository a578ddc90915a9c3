// Single policy questions about concrete devices: may this device reach that one (or that
// address) on this port, and may this device's advertised route be approved automatically.

import { addressKey, containsPrefix, parsePrefix } from './cidr.js';
import { type Protocol, protoNumber } from './protocols.js';
import { candidateRules, deviceSubject, matchesSelector, roleMap, ruleAccepts, type Subject } from './subjects.js';
import type { CompiledPolicy, PolicyDevice, PolicyUser } from './types.js';

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * Whether `src` may send `proto` traffic (a name or IANA number) to `dst` on `port`; protocols
 * other than TCP, UDP and SCTP ignore the port.
 *
 * `dst` may be a device, or an address or prefix as text. Text matches rules by address only
 * (`*`, and IP/CIDR selectors holding it, or overlapping it for a prefix); when `devices` is
 * given, a device owning exactly that address is also matched by identity, as the packet would
 * be. Unparseable text reaches nothing.
 */
export function canReach(
  policy: CompiledPolicy,
  src: PolicyDevice,
  dst: PolicyDevice | string,
  port: number,
  proto: Protocol,
  users: readonly PolicyUser[],
  devices?: readonly PolicyDevice[],
): boolean {
  const roles = roleMap(users);
  const protocol = protoNumber(proto);
  const from = deviceSubject(policy, src, roles);
  const targets: Subject[] = [];
  if (typeof dst === 'string') {
    const p = parsePrefix(dst.trim());
    if (!p.ok) return false;
    targets.push({ keys: NO_KEYS, owner: null, ranges: [p.prefix] });
    const key = addressKey(dst.trim());
    if (key && devices) {
      for (const d of devices) {
        if (d.addresses.some((a) => addressKey(a) === key)) targets.push(deviceSubject(policy, d, roles));
      }
    }
  } else targets.push(deviceSubject(policy, dst, roles));
  return candidateRules(policy, from).some((i) =>
    targets.some((to) => ruleAccepts(policy.rules[i], from, to, port, protocol, 'overlap')),
  );
}

/**
 * Whether `prefix`, advertised by `device`, is approved by the policy's autoApprovers: a subnet
 * within a `routes` prefix whose approvers match the device (its tags, or its user, groups and
 * autogroups), or an exit route (0.0.0.0/0, ::/0) when `exitNode` matches the device.
 */
export function autoApproves(
  policy: CompiledPolicy,
  prefix: string,
  device: PolicyDevice,
  users: readonly PolicyUser[],
): boolean {
  const p = parsePrefix(prefix.trim());
  if (!p.ok) return false;
  const subject = deviceSubject(policy, device, roleMap(users));
  const approved = (sels: CompiledPolicy['autoApprovers']['exitNode']) =>
    sels.some((s) => matchesSelector(s, subject, 'overlap'));
  // As in Tailscale, only `exitNode` approves a default route: a `routes` prefix of 0.0.0.0/0 or
  // ::/0 approves every subnet inside it, never the exit route itself.
  if (p.prefix.bits === 0) return approved(policy.autoApprovers.exitNode);
  return policy.autoApprovers.routes.some((r) => containsPrefix(r.prefix, p.prefix) && approved(r.approvers));
}
