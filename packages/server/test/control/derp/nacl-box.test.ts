import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, privateKeyFromRaw, rawPublicKey, seal } from '../../../src/control/derp/nacl-box.js';

// Sealed by Go's golang.org/x/crypto/nacl/box (what Tailscale's DERP client uses) with the
// private keys below and nonce 0x40..0x57: the relay must open exactly what Go seals.
const alice = privateKeyFromRaw(Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1)));
const bob = privateKeyFromRaw(Buffer.from(Array.from({ length: 32 }, (_, i) => 0xa0 + i)));
const GO_SEALED = Buffer.from(
  '404142434445464748494a4b4c4d4e4f5051525354555657255f0e86874c6b211cf494363c1cff0f7a97717588adfe3dbb80559dc80b0ddc862445221dc4268507351bde317e994f',
  'hex',
);

describe('NaCl box', () => {
  it('derives the public keys Go derives', () => {
    expect(rawPublicKey(alice).toString('hex')).toBe(
      '07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c',
    );
    expect(rawPublicKey(bob).toString('hex')).toBe('605a725d2a4adfeeb1a29e17edd621c1b7593ee8cdbc44ac6c4ab6e2f805d23c');
  });

  it("opens a box sealed by Go's nacl/box", () => {
    expect(open(GO_SEALED, bob, rawPublicKey(alice))?.toString()).toBe('{"version":2,"CanAckPings":true}');
  });

  it('round-trips, and opens nothing tampered with or from another key', () => {
    const sealed = seal(Buffer.from('hello'), alice, rawPublicKey(bob));
    expect(open(sealed, bob, rawPublicKey(alice))?.toString()).toBe('hello');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(open(tampered, bob, rawPublicKey(alice))).toBeUndefined();
    const mallory = generateKeyPairSync('x25519').privateKey;
    expect(open(sealed, bob, rawPublicKey(mallory))).toBeUndefined();
    expect(open(sealed.subarray(0, 30), bob, rawPublicKey(alice))).toBeUndefined();
  });

  it('opens nothing against a low-order public key', () => {
    expect(open(seal(Buffer.from('x'), alice, rawPublicKey(bob)), bob, Buffer.alloc(32))).toBeUndefined();
  });
});
