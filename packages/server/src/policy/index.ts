// The policy engine: a pure library (no I/O, deterministic). Text in → errors or a compiled
// policy out; compiled policy + users + devices in → answers and peer maps out.
//
//   validatePolicy(text)        the one validation PUT /v1/acl and POST /v1/acl/validate share:
//                               syntax, shapes, references, over-permissive patterns and the
//                               policy's own `tests`, every problem with its 1-based line and
//                               column, sorted. Syntax errors are reported alone (a recovered
//                               tree would give misleading follow-on errors). `asTailscale: true`
//                               (a text sent through /api/v2) reads it as Tailscale would: a
//                               file with neither acls nor grants, which Tailscale reads as
//                               allowing everything, is refused.
//   compilePolicy(text)         the same, throwing an Error carrying `errors` when invalid.
//   tagOwners(policy, tag, users)          logins (and `tag:…` owner tags) that own a tag.
//   canApplyTags(policy, tags, actor)      { ok, unknown, notOwned }: API keys may apply any tag
//                               defined in tagOwners; users the tags they own, and users with
//                               the owner, admin or network-admin role any defined tag (as in
//                               Tailscale); a device may apply tags owned by one of its tags
//                               (actor.deviceTags). Undefined tags are always refused.
//   autoApproves(policy, prefix, device, users)  autoApprovers.routes (a subnet within an approved
//                               prefix) and autoApprovers.exitNode (0.0.0.0/0 and ::/0, which
//                               no routes prefix approves, as in Tailscale).
//   canReach(policy, src, dst, port, proto, users, devices?)  may src send to dst on that port;
//                               ICMP ignores ports. dst may be a device or an address/prefix as
//                               text (matched by address; with `devices`, a device owning that
//                               exact address is matched by identity too).
//   parsePrefix(text)           an IPv4/IPv6 CIDR in canonical text, or why it is not one (the
//                               same reading the policy gives its prefixes; routes use it too).
//   policyEtag(text)            the quoted ETag of a stored policy text (a digest of it).
//   peerReachKey(policy)        a digest of what of the policy decides peer maps: equal keys,
//                               equal peer maps for the same devices and users.
//   computePeerMaps(policy, devices, users) → (deviceId) => PeerView[]
//   new PeerMap(policy, devices, users).peers(deviceId)   the same, as a class. Building is O(n)
//                               (about 5 ms at 10,000 devices); each peers() call then costs about
//                               its output. Keep one per (policy version, device set version) to
//                               serve many netmaps; it holds no devices² state.
//
// `users` gives roles (autogroup:admin is the owner and admin roles); a device whose user is not
// in it still counts as a member. Everything is deterministic: same input, same output order.
//
// Semantics, where the contract leaves a choice:
// - Identity: a device with tags is its tags alone; without, its user (the user's groups, the
//   user's role for autogroup:admin, autogroup:member). A device with neither matches only `*`
//   and address selectors.
// - An IP/CIDR selector matches devices with an address inside it and devices serving a route
//   (caller-supplied `routes`: approved, advertised, primary or standby) that overlaps it, on
//   either side: every router of a subnet is a peer of whoever the rule pairs it with. One IPv6
//   address (bare or /128) names no device by its own address, as in Tailscale's recorded
//   netmaps; it still meets the subnet routes holding it.
// - Peers: A and B are peers when either may reach the other on any port or protocol. A peer's
//   allowedIPs are its addresses (/32, /128) and those of its primary routes (`primaryRoutes`,
//   default all of `routes`) the viewer may send into
//   (a rule with the viewer in src and `*` or an overlapping prefix in dst) or receive from (a
//   rule with `*` or an overlapping prefix in src and the viewer in dst). Peer lists follow the
//   order of the devices array. PeerView objects without routes are frozen and shared between
//   calls: copy before changing one.
// - Tests are symbolic (see tests.ts): a login is any untagged device of that user, a group each
//   of its members, a tag a device tagged exactly so; tests know no roles, so autogroup:admin
//   matches no login or group; abstract devices have no address. `proto` defaults to tcp. An
//   `accept` target must be accepted for all of its traffic (every listed port: the contract
//   keeps port lists, ranges and `*`, which Tailscale fails) and names one host (a CIDR fails,
//   as in Tailscale); a `deny` target may name any ports and prefixes, denied for all of them.
// - `proto` is a name (tcp, udp, icmp, ipv6-icmp, sctp, gre, esp, ah, igmp) or an IANA number
//   as a string; only tcp, udp and sctp have ports, so a rule narrowed to other protocols needs
//   `:*` ports, and their traffic matches a destination whatever its ports (as in Tailscale).
// - autogroup:self follows users, groups, autogroup:member, autogroup:admin or `*`: the
//   user-owned devices among them reach their owner's untagged devices. Any other source of the
//   same rule (a tag, autogroup:tagged, an address or host) is an error at that source, as
//   Tailscale refuses the policy.
// - `grants` compile to the same rules as `acls` (validate-grants.ts): each `ip` entry opens its
//   ports to every `dst` selector; `app` opens no traffic but makes its sources and
//   destinations peers, and reaches each destination's packet filter as CapGrant rules; `via`
//   is refused.
// - Exit nodes: a device whose `routes` hold both 0.0.0.0/0 and ::/0. Default routes are no
//   subnets (IP/CIDR selectors ignore them). A device with a rule to autogroup:internet, `*`,
//   0.0.0.0/0 or ::/0 and every exit node are peers; the exit node's allowedIPs for it carry
//   both default routes when both are in `primaryRoutes` (the caller's "online").
// - Over-permissive is judged by meaning (over-permissive.ts): "every device" is `*`,
//   autogroup:member + autogroup:tagged, or prefixes covering the device address pools.

export { parsePrefix } from './cidr.js';
export { type CompileOptions, compile as compileParsedPolicy, compileSteps, drain } from './compile.js';
export { DEFAULT_POLICY } from './default-policy.js';
export { policyEtag } from './etag.js';
export { autoApproves, canReach } from './evaluate.js';
export { hujsonValue } from './hujson.js';
export { type FilterRule, packetFilter, packetFilterJson } from './packet-filter.js';
export { type ParsedPiece, ParsedPolicyBuilder, parsedPieces } from './parsed-pieces.js';
export { peerReachKey } from './peer-reach.js';
export { computePeerMaps, PeerMap, type PeerMapDerivation } from './peers.js';
export {
  checkActionUrl,
  NO_SSH_RULES,
  SSH_ACCEPT,
  sshPolicy,
  sshPolicyJson,
  type TailcfgSshAction,
  type TailcfgSshPolicy,
} from './ssh-policy.js';
export { roleMap } from './subjects.js';
export { canApplyTags, type TagActor, type TagCheck, tagOwners } from './tag-owners.js';
export type {
  CompiledPolicy,
  ParsedPolicy,
  PeerView,
  PolicyDevice,
  PolicyError,
  PolicyRole,
  PolicyUser,
  Protocol,
} from './types.js';
export { compilePolicy, type ValidateResult, validatePolicy } from './validate.js';
export { MAX_CHECK_PERIOD_MS } from './validate-ssh.js';
export { withTests } from './with-tests.js';
