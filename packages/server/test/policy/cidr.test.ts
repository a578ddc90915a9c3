import { describe, expect, it } from 'vitest';
import { addressKey, formatKey, overlaps, type Prefix, parsePrefix } from '../../src/policy/cidr.js';
import { PrefixTree } from '../../src/policy/prefix-index.js';

const prefix = (s: string): Prefix => {
  const r = parsePrefix(s);
  if (!r.ok) throw new Error(r.msg);
  return r.prefix;
};

describe('addresses and prefixes', () => {
  it('parses and formats IPv4 and IPv6', () => {
    expect(addressKey('100.64.0.7')).toBe('46440 0007'.replace(' ', ''));
    expect(addressKey('256.1.1.1')).toBeNull();
    expect(addressKey('1.2.3')).toBeNull();
    expect(addressKey('01.2.3.4')).toBeNull();
    expect(formatKey(addressKey('fd7a:115c:a1e0::7') as string)).toBe('fd7a:115c:a1e0::7');
    expect(formatKey(addressKey('0:0:0:0:0:0:0:1') as string)).toBe('::1');
    expect(formatKey(addressKey('1:0:0:2:0:0:0:3') as string)).toBe('1:0:0:2::3');
    expect(formatKey(addressKey('::ffff:1.2.3.4') as string)).toBe('::ffff:102:304');
    expect(addressKey('1::2::3')).toBeNull();
    expect(addressKey('fe80::1%eth0')).toBeNull();
    expect(addressKey('1:2:3:4:5:6:7:8:9')).toBeNull();
    expect(addressKey('1:2:3:4:5:6:7::')).not.toBeNull();
  });

  it('parses prefixes and refuses host bits', () => {
    expect(prefix('10.0.0.0/8').text).toBe('10.0.0.0/8');
    expect(prefix('10.1.2.3').text).toBe('10.1.2.3/32');
    expect(prefix('fd7a:115c:a1e0::/48').text).toBe('fd7a:115c:a1e0::/48');
    expect(prefix('::/0').text).toBe('::/0');
    expect(prefix('10.0.0.0/9').end).toBe(addressKey('10.127.255.255'));
    expect(parsePrefix('10.0.0.1/31')).toEqual({
      ok: false,
      msg: '"10.0.0.1/31" is not a network address; did you mean 10.0.0.0/31',
    });
    expect(parsePrefix('10.0.0.0/-1').ok).toBe(false);
    expect(parsePrefix('10.0.0.0/').ok).toBe(false);
    expect(parsePrefix('::/129').ok).toBe(false);
  });

  it('finds every overlapping prefix through the prefix forest', () => {
    const texts = [
      '10.0.0.0/8',
      '10.0.0.0/16',
      '10.0.1.0/24',
      '10.1.0.0/16',
      '192.168.0.0/16',
      '0.0.0.0/0',
      'fd00::/8',
      '10.0.0.128/25',
    ];
    const prefixes = texts.map(prefix);
    const tree = new PrefixTree(prefixes);
    for (const q of [
      '10.0.0.5',
      '10.0.0.200',
      '10.0.2.0/24',
      '10.0.0.0/12',
      '11.0.0.0/8',
      'fd00::1',
      '::1',
      '192.0.0.0/2',
      '0.0.0.0/0',
    ]) {
      const qp = prefix(q);
      const got: number[] = [];
      tree.overlapping(qp, got);
      const want = prefixes.map((p, i) => (overlaps(p, qp) ? i : -1)).filter((i) => i >= 0);
      expect(
        got.sort((a, b) => a - b),
        q,
      ).toEqual(want);
    }
  });
});

describe('address parsing against node:net', () => {
  it('agrees with isIPv4 / isIPv6 on random strings, and formats back to the same address', async () => {
    const { isIPv4, isIPv6 } = await import('node:net');
    let seed = 12345;
    const rnd = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const alphabet = '0123456789abcdefABCDEF:.:::0';
    const seeds = [
      '1:2:3:4:5:6:7:8',
      '::',
      '1::',
      '::1',
      'fd7a:115c:a1e0::7',
      '::ffff:1.2.3.4',
      '1:2:3:4:5:6:1.2.3.4',
      '10.0.0.1',
    ];
    for (let i = 0; i < 30_000; i++) {
      let s = '';
      for (let j = 1 + Math.floor(rnd() * 20); j > 0; j--) s += alphabet[Math.floor(rnd() * alphabet.length)];
      if (rnd() < 0.3) s = seeds[Math.floor(rnd() * seeds.length)] + (rnd() < 0.5 ? s.slice(0, 2) : '');
      const key = addressKey(s);
      // node accepts leading zeros in IPv4 octets; the policy refuses them.
      const valid = s.includes(':') ? isIPv6(s) : isIPv4(s) && !/(^|\.)0\d/.test(s);
      expect(key !== null, s).toBe(valid);
      if (key) expect(addressKey(formatKey(key)), s).toBe(key);
    }
  });
});
