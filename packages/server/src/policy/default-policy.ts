// The policy of a new network. It is stored verbatim, comments included, so it doubles as a
// short guide to the format for whoever opens it first.

export const DEFAULT_POLICY = `// Warren network policy (HuJSON: JSON with comments and trailing commas).
// Anything no rule accepts is denied. Validate changes with \`warren acl validate FILE\`.
{
  // "group:eng": ["ana@example.com", "bo@example.com"],
  "groups": {},

  // Who may apply each tag, e.g. "tag:server": ["group:eng"].
  "tagOwners": {},

  // Names for addresses and subnets, e.g. "db": "10.0.0.5".
  "hosts": {},

  "acls": [
    // Every member reaches their own devices, on every port.
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    // Admins (users with the owner or admin role) reach everything.
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
  ],

  // Routes approved as soon as they are advertised, e.g. "10.0.0.0/8": ["tag:router"].
  "autoApprovers": { "routes": {} },

  // Checked on every change: a change that breaks one of these is refused.
  "tests": [],
}
`;
