// A compiled policy's reach key: a digest of what of it decides who sees whom and which routes
// each viewer gets (peers.ts, device-index.ts), and of nothing else. Peer maps read only the
// rules' port- and protocol-blind summaries (CompiledRule: srcAll … dstInternet, by rule
// number), the address prefixes those summaries number, and the principal keys of identities
// (index.userKeys, index.tagKeys: which users, groups and tags the rules name); every other
// index a peer map reads is built from those by compile.ts. So two policies with one reach key
// give the same peer map for the same devices and users: a policy that changed ports,
// protocols, `ssh`, application capabilities, tagOwners or autoApprovers leaves it as it was,
// and a peer map made under one answers for the other.

import { createHash } from 'node:crypto';
import type { CompiledPolicy } from './types.js';

/** Made once per compiled policy: a policy of 2,000 rules and 10,000 users is a few milliseconds. */
const keys = new WeakMap<CompiledPolicy, string>();

export function peerReachKey(policy: CompiledPolicy): string {
  let key = keys.get(policy);
  if (key === undefined) {
    key = createHash('sha256').update(reachText(policy)).digest('hex');
    keys.set(policy, key);
  }
  return key;
}

function reachText({ rules, index }: CompiledPolicy): string {
  const parts: string[] = rules.map((r) =>
    JSON.stringify([r.srcAll, r.srcKeys, r.srcPrefixes, r.dstAll, r.dstKeys, r.dstPrefixes, r.dstSelf, r.dstInternet]),
  );
  parts.push(
    JSON.stringify(index.prefixes.map((p) => p.text)),
    JSON.stringify([...index.userKeys]),
    JSON.stringify([...index.tagKeys]),
  );
  return parts.join('\n');
}
