/**
 * Entity tags in `If-Match` and `If-None-Match` (RFC 9110 §13.1): `*`, or a comma-separated list
 * of tags, each quoted or bare (clients and scripts send both), weak ones marked `W/`. If-Match
 * compares strongly, so a weak tag never matches there; If-None-Match compares weakly.
 */
export function entityTagsMatch(header: string, etag: string, comparison: 'strong' | 'weak'): boolean {
  const current = unquote(etag);
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    if (tag === '*') return true;
    const weak = tag.startsWith('W/');
    if (weak && comparison === 'strong') return false;
    return unquote(weak ? tag.slice(2) : tag) === current;
  });
}

const unquote = (tag: string) => (tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"') ? tag.slice(1, -1) : tag);
