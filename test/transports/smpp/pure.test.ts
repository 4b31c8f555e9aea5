import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import {
  authFailurePolicy,
  BindThrottle,
  COMMAND_STATUS,
  commandStatusInfo,
  describeCommandStatus,
  nextReconnectDelayMs,
  resolveSmppConfig,
  TokenBucket,
} from '../../../src/transports/smpp/index.js';
import { decodeSubmitSm, PduFramer, readHeader } from '../../support/smsc/pdu-framer.js';

describe('nextReconnectDelayMs', () => {
  const policy = { initialDelayMs: 1_000, maxDelayMs: 60_000 };

  it('doubles per attempt with equal jitter: [nominal/2, nominal)', () => {
    expect([0, 1, 2, 3].map((attempt) => nextReconnectDelayMs(attempt, 0, policy))).toEqual([500, 1_000, 2_000, 4_000]);
    expect([0, 1, 2, 3].map((attempt) => nextReconnectDelayMs(attempt, 0.999999, policy))).toEqual([999, 1_999, 3_999, 7_999]);
  });

  it('caps at maxDelayMs', () => {
    expect(nextReconnectDelayMs(50, 0, policy)).toBe(30_000);
    expect(nextReconnectDelayMs(1_000_000, 0.5, policy)).toBe(45_000);
  });

  it('starts auth-failure retries at 30 s and caps them at 10 minutes', () => {
    const slow = authFailurePolicy({ ...policy, authFailureDelayMs: 30_000 });
    expect(nextReconnectDelayMs(0, 0, slow)).toBe(15_000);
    expect(nextReconnectDelayMs(0, 0.999999, slow)).toBe(29_999);
    expect(nextReconnectDelayMs(20, 0, slow)).toBe(300_000);
  });
});

describe('TokenBucket', () => {
  it('allows a burst of its capacity, then one token per 1000/rate ms', () => {
    const bucket = new TokenBucket(10, 2, 0);
    expect([bucket.take(0), bucket.take(0)]).toEqual([0, 0]);
    expect(bucket.take(0)).toBe(100);
    expect(bucket.take(50)).toBe(50);
    expect(bucket.take(100)).toBe(0);
    expect(bucket.take(100)).toBe(100);
  });

  it('never holds more than its capacity after idling', () => {
    const bucket = new TokenBucket(1_000, 3, 0);
    const taken = [1, 2, 3, 4].map(() => bucket.take(60_000));
    expect(taken).toEqual([0, 0, 0, 1]);
  });

  it('sizes bursts at a tenth of a second of rate', () => {
    expect(TokenBucket.capacityFor(100)).toBe(10);
    expect(TokenBucket.capacityFor(1)).toBe(1);
  });

  it('retuned to another rate keeps the tokens it holds (up to the new capacity) instead of refilling', () => {
    const bucket = new TokenBucket(100, 10, 0);
    for (let i = 0; i < 10; i++) expect(bucket.take(0)).toBe(0);
    // Empty at 100/s; at 200/s it is still empty, and the next token comes after 1000/200 ms.
    const faster = bucket.retuned(200, 0);
    expect(faster.ratePerSecond).toBe(200);
    expect(faster.take(0)).toBe(5);
    // A full bucket moved to a lower rate keeps at most the new capacity: a burst of 5 at 50/s.
    const slower = new TokenBucket(100, 10, 0).retuned(50, 0);
    expect([1, 2, 3, 4, 5, 6].map(() => slower.take(0))).toEqual([0, 0, 0, 0, 0, 20]);
  });
});

describe('BindThrottle', () => {
  it('pauses 1 s, 2 s, 4 s... up to 30 s and steps back one level per accepted submit', () => {
    const throttle = new BindThrottle();
    expect(throttle.onSlowDown(0)).toBe(1_000);
    expect(throttle.pauseRemainingMs(400)).toBe(600);
    expect(throttle.onSlowDown(1_000)).toBe(2_000);
    expect(throttle.onSlowDown(3_000)).toBe(4_000);
    expect(throttle.pauseRemainingMs(7_000)).toBe(0);
    throttle.onAccepted();
    expect(throttle.slowDownLevel).toBe(2);
    for (let i = 0; i < 10; i++) throttle.onSlowDown(10_000);
    expect(throttle.onSlowDown(20_000)).toBe(30_000);
  });
});

describe('command_status table (SMPP 3.4 §5.1.3)', () => {
  it('names and classifies the statuses the transport acts on', () => {
    expect(commandStatusInfo(0x58)).toMatchObject({ name: 'ESME_RTHROTTLED', kind: 'temporary' });
    expect(commandStatusInfo(0x14)).toMatchObject({ name: 'ESME_RMSGQFUL', kind: 'temporary' });
    expect(commandStatusInfo(0x0a)).toMatchObject({ name: 'ESME_RINVSRCADR', kind: 'permanent' });
    expect(commandStatusInfo(0x0b)).toMatchObject({ name: 'ESME_RINVDSTADR', kind: 'permanent' });
    expect(commandStatusInfo(0x45)).toMatchObject({ name: 'ESME_RSUBMITFAIL', kind: 'permanent' });
    expect(commandStatusInfo(0x0e)).toMatchObject({ name: 'ESME_RINVPASWD', kind: 'bind' });
    expect(commandStatusInfo(0x0d)).toMatchObject({ name: 'ESME_RBINDFAIL', kind: 'bind' });
  });

  it('agrees with the smpp package on every value both define', () => {
    const packageNames = new Map(Object.entries(smpp.errors).map(([name, value]) => [value, name]));
    let compared = 0;
    for (const [value, info] of Object.entries(COMMAND_STATUS)) {
      const packageName = packageNames.get(Number(value));
      // SMPP 3.4 names the 0xC0-0xC4 TLV errors ESME_R*OPT*; the package uses SMPP 5.0 names.
      if (packageName === undefined || Number(value) >= 0xc0) continue;
      expect(info.name).toBe(packageName);
      compared += 1;
    }
    // The loop must have compared something: both tables carry the SMPP 3.4 §5.1.3 statuses 0x00-0x0F at least.
    expect(compared).toBeGreaterThanOrEqual(16);
  });

  it('names an undefined value by its number, permanent, and fits it in 30 characters', () => {
    expect(commandStatusInfo(0x400)).toMatchObject({ name: 'ESME_0x00000400', kind: 'permanent' });
    expect(describeCommandStatus(0x0e)).toBe('ESME_RINVPASWD (0x0000000E): Invalid password');
    for (const info of Object.values(COMMAND_STATUS)) expect(info.name.length).toBeLessThanOrEqual(30);
  });
});

describe('resolveSmppConfig', () => {
  it('applies the documented defaults', () => {
    const config = resolveSmppConfig({ name: 'c', type: 'smpp', host: 'h', port: 2775, systemId: 's', password: 'p', bindMode: 'transceiver' });
    expect(config).toMatchObject({
      binds: 1, window: 10, maxPerSecond: 100, enquireLinkIntervalMs: 30_000, responseTimeoutMs: 10_000,
      dataCoding: { gsm7: 0 }, concatenation: 'udh8', registeredDelivery: 1, messageIdFormat: 'as-is', tls: false, systemType: '',
      reconnect: { initialDelayMs: 1_000, maxDelayMs: 60_000, authFailureDelayMs: 30_000 },
    });
  });
});

describe('PduFramer (test SMSC wire capture)', () => {
  const first = new smpp.PDU('enquire_link', { sequence_number: 7 }).toBuffer();
  const second = new smpp.PDU('submit_sm', {
    sequence_number: 8, source_addr: 'abc', destination_addr: '353', data_coding: 0, esm_class: 0x40,
    short_message: Buffer.from('050003010201616263', 'hex'), sar_total_segments: 2,
  }).toBuffer();
  const stream = Buffer.concat([first, second]);

  it('splits a stream fed whole', () => {
    const frames = new PduFramer().push(stream);
    expect(frames.map((frame) => frame.toString('hex'))).toEqual([first.toString('hex'), second.toString('hex')]);
  });

  it('gives the same frames fed one byte at a time', () => {
    const framer = new PduFramer();
    const frames = [...stream].flatMap((byte) => framer.push(Buffer.of(byte)));
    expect(frames.map((frame) => frame.toString('hex'))).toEqual([first.toString('hex'), second.toString('hex')]);
    expect(framer.pendingOctets).toBe(0);
  });

  it('decodes submit_sm with short_message and TLVs as octets', () => {
    expect(readHeader(second)).toMatchObject({ commandId: 0x00000004, sequenceNumber: 8 });
    const wire = decodeSubmitSm(second);
    expect(wire).toMatchObject({ source_addr: 'abc', destination_addr: '353', esm_class: 0x40, data_coding: 0 });
    expect(wire.short_message.toString('hex')).toBe('050003010201616263');
    expect(wire.tlvs.get(0x020e)?.toString('hex')).toBe('02');
  });

  it('rejects a command_length shorter than the header', () => {
    expect(() => new PduFramer().push(Buffer.from('0000000400000000', 'hex'))).toThrow(RangeError);
  });
});

describe('nextReconnectDelayMs defaults', () => {
  it('uses the transport defaults (1 s doubling to 60 s) when no policy is given', () => {
    expect(nextReconnectDelayMs(0, 0)).toBe(500);
    expect(nextReconnectDelayMs(10, 0)).toBe(30_000);
  });
});
