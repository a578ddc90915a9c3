/**
 * The Noise IK handshake of Tailscale's control protocol, as the responder (the server), and
 * as the initiator for tests and tools. Wire facts (Tailscale's control/controlbase):
 *  - protocol name `Noise_IK_25519_ChaChaPoly_BLAKE2s`, prologue
 *    `Tailscale Control Protocol v<version>` (decimal), then the server's static key is mixed
 *    in (the "<- s" pre-message of IK);
 *  - initiation (101 bytes): version u16 BE, type 1, payload length u16 BE (96), then the
 *    client's ephemeral key (32), its encrypted machine key (48) and an empty payload's tag (16);
 *  - response (51 bytes): type 2, length u16 BE (48), the server's ephemeral key and a tag;
 *  - an error before the handshake completes: type 3, length, plain text (a hint only);
 *  - Split(): the first key encrypts client → server, the second server → client.
 */
import { blake2s, hkdf2, openOnce, sealOnce, type X25519KeyPair, x25519, x25519Generate } from './noise-crypto.js';

export const MSG_INITIATION = 1;
export const MSG_RESPONSE = 2;
export const MSG_ERROR = 3;
export const MSG_RECORD = 4;

export const INITIATION_LEN = 101;
export const RESPONSE_LEN = 51;
const INITIATION_HEADER = 5;
const RESPONSE_HEADER = 3;

const PROTOCOL_NAME = Buffer.from('Noise_IK_25519_ChaChaPoly_BLAKE2s');

export class HandshakeError extends Error {}

/** The keys a finished handshake leaves: one per direction, and what the peer proved. */
export interface Session {
  /** The protocol version the client asked for. */
  version: number;
  /** The peer's static key (the client's machine key, on the server). */
  peerStatic: Buffer;
  /** Key for what this side sends. */
  txKey: Buffer;
  /** Key for what this side receives. */
  rxKey: Buffer;
  handshakeHash: Buffer;
}

class SymmetricState {
  h: Buffer = blake2s(PROTOCOL_NAME);
  ck: Buffer = Buffer.from(this.h);

  mixHash(data: Buffer): void {
    this.h = blake2s(this.h, data);
  }

  /** Mixes a DH result into the chaining key; returns the key for the next encryption. */
  mixDH(privateKey: X25519KeyPair['privateKey'], publicRaw: Buffer): Buffer {
    let shared: Buffer;
    try {
      shared = x25519(privateKey, publicRaw);
    } catch {
      throw new HandshakeError('invalid public key in handshake');
    }
    const [ck, k] = hkdf2(this.ck, shared);
    this.ck = ck;
    return k;
  }

  encryptAndHash(key: Buffer, plaintext: Buffer): Buffer {
    const out = sealOnce(key, plaintext, this.h);
    this.mixHash(out);
    return out;
  }

  decryptAndHash(key: Buffer, ciphertext: Buffer): Buffer {
    const out = openOnce(key, ciphertext, this.h);
    if (!out) throw new HandshakeError('handshake message does not authenticate');
    this.mixHash(ciphertext);
    return out;
  }

  split(): [Buffer, Buffer] {
    return hkdf2(this.ck, Buffer.alloc(0));
  }
}

function prologue(version: number): Buffer {
  return Buffer.from(`Tailscale Control Protocol v${version}`);
}

function begin(version: number, serverPublic: Buffer): SymmetricState {
  const s = new SymmetricState();
  s.mixHash(prologue(version));
  s.mixHash(serverPublic);
  return s;
}

/** A type-3 frame: why the server refused the handshake, as the client prints it. */
export function errorFrame(message: string): Buffer {
  const text = Buffer.from(message).subarray(0, 0xffff);
  const header = Buffer.alloc(RESPONSE_HEADER);
  header[0] = MSG_ERROR;
  header.writeUInt16BE(text.length, 1);
  return Buffer.concat([header, text]);
}

/**
 * The server's side: checks and answers a client's initiation. Returns the response bytes to
 * send and the session. Throws HandshakeError (send `errorFrame(message)`) when refused.
 */
export function respond(server: X25519KeyPair, init: Buffer): { response: Buffer; session: Session } {
  if (init.length !== INITIATION_LEN) throw new HandshakeError('wrong handshake initiation size');
  if (init[2] !== MSG_INITIATION) throw new HandshakeError('unexpected handshake message type');
  if (init.readUInt16BE(3) !== INITIATION_LEN - INITIATION_HEADER) {
    throw new HandshakeError('wrong handshake initiation length');
  }
  const version = init.readUInt16BE(0);
  const clientEphemeral = init.subarray(5, 37);
  const sealedMachineKey = init.subarray(37, 85);
  const tag = init.subarray(85, 101);

  const s = begin(version, server.publicKey);
  s.mixHash(clientEphemeral);
  const machineKey = s.decryptAndHash(s.mixDH(server.privateKey, clientEphemeral), sealedMachineKey);
  s.decryptAndHash(s.mixDH(server.privateKey, machineKey), tag);

  const ephemeral = x25519Generate();
  s.mixHash(ephemeral.publicKey);
  s.mixDH(ephemeral.privateKey, clientEphemeral);
  const responseTag = s.encryptAndHash(s.mixDH(ephemeral.privateKey, machineKey), Buffer.alloc(0));
  const [c1, c2] = s.split();

  const response = Buffer.alloc(RESPONSE_LEN);
  response[0] = MSG_RESPONSE;
  response.writeUInt16BE(RESPONSE_LEN - RESPONSE_HEADER, 1);
  ephemeral.publicKey.copy(response, RESPONSE_HEADER);
  responseTag.copy(response, RESPONSE_HEADER + 32);
  return { response, session: { version, peerStatic: machineKey, txKey: c2, rxKey: c1, handshakeHash: s.h } };
}

/**
 * The client's side, in two steps as a client speaks it over HTTP: `initiation` goes in the
 * upgrade request; `finish` reads the server's response.
 */
export function initiate(
  machine: X25519KeyPair,
  serverPublic: Buffer,
  version: number,
): { initiation: Buffer; finish: (response: Buffer) => Session } {
  const s = begin(version, serverPublic);
  const ephemeral = x25519Generate();
  s.mixHash(ephemeral.publicKey);
  const sealedMachineKey = s.encryptAndHash(s.mixDH(ephemeral.privateKey, serverPublic), machine.publicKey);
  const tag = s.encryptAndHash(s.mixDH(machine.privateKey, serverPublic), Buffer.alloc(0));
  const initiation = Buffer.alloc(INITIATION_LEN);
  initiation.writeUInt16BE(version, 0);
  initiation[2] = MSG_INITIATION;
  initiation.writeUInt16BE(INITIATION_LEN - INITIATION_HEADER, 3);
  ephemeral.publicKey.copy(initiation, 5);
  sealedMachineKey.copy(initiation, 37);
  tag.copy(initiation, 85);

  const finish = (response: Buffer): Session => {
    if (response.length !== RESPONSE_LEN || response[0] !== MSG_RESPONSE) {
      throw new HandshakeError(
        response[0] === MSG_ERROR ? `server error: ${response.subarray(3).toString()}` : 'bad handshake response',
      );
    }
    const serverEphemeral = response.subarray(RESPONSE_HEADER, RESPONSE_HEADER + 32);
    s.mixHash(serverEphemeral);
    s.mixDH(ephemeral.privateKey, serverEphemeral);
    s.decryptAndHash(s.mixDH(machine.privateKey, serverEphemeral), response.subarray(RESPONSE_HEADER + 32));
    const [c1, c2] = s.split();
    return { version, peerStatic: serverPublic, txKey: c1, rxKey: c2, handshakeHash: s.h };
  };
  return { initiation, finish };
}
