import { describe, expect, it } from 'vitest';
import { parseEndpoint } from '../../src/modules/logs/connections.address.js';
import { parseRfc3339 } from '../../src/modules/logs/connections.validate.js';
import { ipv4Of, ipv6Of } from './helpers.js';

describe('endpoint addresses', () => {
  it('parses IPv4 and IPv6 endpoints into canonical text', () => {
    expect(parseEndpoint('100.64.0.7:443')).toEqual({ text: '100.64.0.7:443', port: 443, addrIndex: 7 });
    expect(parseEndpoint('[FD7A:115C:A1E0:0:0:0:0:7]:22')).toEqual({
      text: '[fd7a:115c:a1e0::7]:22',
      port: 22,
      addrIndex: 7,
    });
    expect(parseEndpoint('[::ffff:10.0.0.1]:53')).toMatchObject({ text: '10.0.0.1:53', addrIndex: undefined });
    expect(parseEndpoint('[::FFFF:100.64.0.7]:443')).toEqual({ text: '100.64.0.7:443', port: 443, addrIndex: 7 });
    expect(parseEndpoint('[::ffff:6440:7]:443')).toEqual({ text: '100.64.0.7:443', port: 443, addrIndex: 7 });
    expect(parseEndpoint('[1:0:0:1:0:0:0:1]:3')).toMatchObject({ text: '[1:0:0:1::1]:3' });
    expect(parseEndpoint('10.0.0.5:0')).toEqual({ text: '10.0.0.5:0', port: 0, addrIndex: undefined });
    expect(parseEndpoint('1.2.3.4:65535')).toMatchObject({ port: 65535 });
  });

  it('refuses what is not an address with a port', () => {
    for (const bad of [
      '1.2.3.4',
      '1.2.3.4:65536',
      '1.2.3.4:080',
      '1.2.3.4:-1',
      '01.2.3.4:1',
      '256.1.1.1:1',
      'fd7a:115c:a1e0::7:443',
      '[fd7a::1::2]:1',
      '[fe80::1%eth0]:1',
      '[1.2.3.4]:1',
      'host:80',
      '',
    ]) {
      expect(typeof parseEndpoint(bad), bad).toBe('string');
    }
  });

  it('maps every address of a device back to its address index, and .0/.255 to none', () => {
    for (const index of [1, 2, 253, 254, 255, 256, 509, 65_000, 70_000, 4_000_000]) {
      expect(parseEndpoint(`${ipv4Of(index)}:1`)).toMatchObject({ addrIndex: index });
      expect(parseEndpoint(`[${ipv6Of(index)}]:1`)).toMatchObject({ addrIndex: index });
    }
    expect(parseEndpoint('100.64.1.0:1')).toMatchObject({ addrIndex: undefined });
    expect(parseEndpoint('100.64.0.255:1')).toMatchObject({ addrIndex: undefined });
    expect(parseEndpoint('100.128.0.1:1')).toMatchObject({ addrIndex: undefined });
    expect(parseEndpoint('[fd7a:115c:a1e1::1]:1')).toMatchObject({ addrIndex: undefined });
  });
});

describe('RFC 3339 times', () => {
  it('parses UTC, offsets and fractions', () => {
    expect(parseRfc3339('2026-11-22T10:00:00Z')).toBe(Date.UTC(2026, 10, 22, 10));
    expect(parseRfc3339('2026-11-22t10:00:00.123456z')).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
    expect(parseRfc3339('2026-11-22T12:30:00+02:30')).toBe(Date.UTC(2026, 10, 22, 10));
    expect(parseRfc3339('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseRfc3339('0050-03-01T00:00:00Z')).toBe(Date.parse('0050-03-01T00:00:00Z'));
  });

  it('refuses other shapes and impossible dates', () => {
    for (const bad of [
      '2026-11-22',
      '2026-11-22 10:00:00Z',
      '2026-11-22T10:00:00',
      '2026-13-01T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T10:00:00+24:00',
      '1700000000',
      'yesterday',
    ]) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
    }
  });
});
