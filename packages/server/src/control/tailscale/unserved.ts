/**
 * What tailscaled is told when it asks the control server for something Warren does not offer.
 * Each of these requests comes from a command a person typed (`tailscale serve` over HTTPS,
 * `tailscale funnel`, `tailscale lock`, `tailscale cert`, `tailscale id-token`, the web
 * interface's sign-in), and the client shows the answer's status and text as the command's
 * error (localapi copies them through), so the text says what is missing and why, in the
 * words of the command, rather than naming a path the person never typed.
 *
 * The status is 501: the request is well formed and the feature does not exist here. No path
 * below is retried by the client on any status (read in tailscaled v1.102.5: ipn/localapi,
 * ipn/ipnlocal/tailnet-lock.go, web_client.go, control/controlclient/direct.go), so a prompt
 * refusal ends the command at once. A path not listed keeps the plain 404.
 */

const NO_HTTPS =
  'Warren issues no TLS certificates for MagicDNS names, so HTTPS cannot be turned on for this network: ' +
  'tailscale serve --http=PORT and --tcp=PORT work without it';

/** The path whose answer depends on the request body (the feature asked about). */
export const FEATURE_QUERY = '/machine/feature/query';

/** Features `tailscale serve` and `tailscale funnel` ask about (FEATURE_QUERY). */
const FEATURES = new Map([
  ['serve', `tailscale serve over HTTPS is not available: ${NO_HTTPS}`],
  ['funnel', `tailscale funnel is not available: Warren does not expose devices to the internet, and ${NO_HTTPS}`],
]);

const PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['/machine/tka/', 'Tailnet Lock is not available: Warren does not offer it'],
  [
    '/machine/webclient/',
    'managing a device from its web interface over the tailnet is not available on Warren: use the tailscale command, or tailscale web on the device itself',
  ],
];

const PATHS = new Map([
  ['/machine/set-dns', `tailscale cert is not available: ${NO_HTTPS}`],
  ['/machine/id-token', 'ID tokens are not available: Warren does not issue them (no workload identity federation)'],
  ['/machine/set-device-attr', 'device attributes cannot be set from the device on Warren: use /v1 or the console'],
]);

/**
 * The refusal for `route`, or undefined when Warren has nothing to say of it. `feature` is the
 * `Feature` of a `/machine/feature/query` body.
 */
export function unservedText(route: string, feature?: string): string | undefined {
  if (route === FEATURE_QUERY) {
    // The name is echoed clipped: the body may be up to a megabyte.
    return FEATURES.get(feature ?? '') ?? `the feature "${(feature ?? '').slice(0, 64)}" is not available on Warren`;
  }
  return PATHS.get(route) ?? PREFIXES.find(([prefix]) => route.startsWith(prefix))?.[1];
}
