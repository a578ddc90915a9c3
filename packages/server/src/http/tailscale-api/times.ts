/**
 * Times as Tailscale's API writes them: RFC 3339 in UTC to the second (`2024-01-11T16:20:25Z`),
 * not to the millisecond as `/v1` does. Scripts written against Tailscale parse them with a
 * fixed layout (Python's `strptime(t, "%Y-%m-%dT%H:%M:%SZ")`, say), which a fraction breaks.
 */
export const tailscaleTime = (time: string): string => time.replace(/\.\d+Z$/, 'Z');

export const tailscaleTimeOrNull = (time: string | null): string | null => (time === null ? null : tailscaleTime(time));
