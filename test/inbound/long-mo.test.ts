/**
 * MO PDUs that SMPP 3.4 allows and smsgate used to refuse or misread, sent by a third-party SMSC
 * (Perl Net::SMPP, test/support/perl-smsc) over loopback into a running `smsgate serve`:
 *  - a deliver_sm whose message_payload TLV is 65,535 octets (SMPP 3.4 §5.3.2.32), a PDU of about
 *    66 KB, is acknowledged and stored whole (it was answered ESME_RINVCMDLEN above 16,384 octets);
 *  - a UDH whose length (UDHL) points past the end of the user data gives the octets as text, not
 *    an empty text, with a warning line;
 *  - GSM-7 octets above 0x7F in an unpacked short_message (data_coding 0) are read with their top
 *    bit masked, with a warning line, not turned into spaces.
 * Opt-out keywords with trailing punctuation or in fullwidth form are matched through the same
 * gateway: STOP. and ＳＴＯＰ opt out; "STOP SENDING ME THE BILL?" does not.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { encodeGsm7Septets, encodeUcs2 } from '../../src/sms/index.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { readDatabase, tempDir, until } from '../e2e/e2e-setup.js';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { PerlSmsc } from '../support/perl-smsc/perl-smsc.js';

const SHORT_CODE = '50123';
const UDHI = 0x40;
const DATA_CODING_UCS2 = 0x08;

let dir: string | undefined;
let smsc: PerlSmsc | undefined;
let gateway: GatewayProcess | undefined;

afterEach(async () => {
  gateway?.kill('SIGKILL');
  await smsc?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  gateway = undefined;
  smsc = undefined;
  dir = undefined;
});

interface Rig {
  path: string;
  smsc: PerlSmsc;
  gateway: GatewayProcess;
}

async function start(prefix: string): Promise<Rig> {
  dir = tempDir(prefix);
  smsc = await PerlSmsc.start({ receipt: 'none' });
  const written = writeGatewayConfig(dir, {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, drainTimeoutMs: 1_000 },
    transports: [{ name: 'carrier', type: 'smpp', ...smsc.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver', reconnect: { initialDelayMs: 100, maxDelayMs: 500 } }],
    routes: [{ prefix: '', transport: 'carrier' }],
  });
  await seedAccount(written.config);
  const store = await openStore({ path: written.config.database.path });
  try {
    const admin = new InboundAdmin(sqliteStorePorts(store).inbound);
    await admin.addRoute('acme', SHORT_CODE);
    await admin.setOptoutKeywords('acme', ['stop', 'unsubscribe']);
  } finally {
    await store.close();
  }
  gateway = await GatewayProcess.spawn(written.path);
  await smsc.waitFor('bind', 10_000, 1);
  return { path: written.config.database.path, smsc, gateway };
}

/** Sends one MO and resolves with the deliver_sm_resp command_status. */
async function send(rig: Rig, mo: Parameters<PerlSmsc['deliverMo']>[0]): Promise<number> {
  const before = rig.smsc.eventsOf('deliver_sm_resp').length;
  await rig.smsc.deliverMo(mo);
  const responses = await rig.smsc.waitFor('deliver_sm_resp', 15_000, before + 1);
  return Number(responses[before]?.['status']);
}

function texts(path: string): string[] {
  return readDatabase(path, (db) => db.prepare('SELECT text FROM inbound_messages ORDER BY id').pluck().all() as string[]);
}

function hex(octets: Uint8Array): string {
  return Buffer.from(octets).toString('hex');
}

describe('MO PDUs as SMPP 3.4 allows them, into a running gateway', () => {
  it('stores a deliver_sm whose message_payload is 65,535 octets, the SMPP maximum', async () => {
    const rig = await start('long-mo');
    const pattern = 'The quick brown fox jumps over the lazy dog 0123456789. ';
    const text = pattern.repeat(Math.ceil(65_535 / pattern.length)).slice(0, 65_535);
    const payload = encodeGsm7Septets(text);
    expect(payload.length).toBe(65_535);
    expect(await send(rig, { source_addr: '353861234567', destination_addr: SHORT_CODE, data_coding: 0, short_message: '', message_payload: hex(payload) })).toBe(0);
    const stored = await until(() => texts(rig.path), (t) => t.length === 1, 10_000, 'the long message stored');
    expect(stored[0]?.length).toBe(65_535);
    expect(stored[0]).toBe(text);
    // The link was kept: a short MO after it goes through too.
    expect(await send(rig, { source_addr: '353861234567', destination_addr: SHORT_CODE, data_coding: 0, short_message: hex(encodeGsm7Septets('after')) })).toBe(0);
    await until(() => texts(rig.path), (t) => t.length === 2 && t[1] === 'after', 10_000, 'the message after it');
  }, 120_000);

  it('reads a UDH longer than the user data as text without a header, and masks GSM-7 octets above 0x7F, each with a warning', async () => {
    const rig = await start('mo-reading');
    // UDHL 0x20 (32 octets of header) in 9 octets of user data: the header cannot be read.
    const badUdh = Buffer.concat([Buffer.from([0x20, 0x00, 0x03]), Buffer.from(encodeGsm7Septets('Hello!'))]);
    expect(await send(rig, { source_addr: '353861234567', destination_addr: SHORT_CODE, esm_class: UDHI, data_coding: 0, short_message: hex(badUdh) })).toBe(0);
    // "Hi there" with the top bit set on 'H', ' ' and 'e' (an SMSC that passes 8-bit octets through).
    const topBits = Buffer.from(encodeGsm7Septets('Hi there'));
    for (const at of [0, 2, 5]) topBits[at] = (topBits[at] as number) | 0x80;
    expect(await send(rig, { source_addr: '353861234567', destination_addr: SHORT_CODE, data_coding: 0, short_message: hex(topBits) })).toBe(0);
    // A UCS-2 MO with a header that runs past its end keeps its text too.
    const ucs2 = Buffer.concat([Buffer.from([0x7f]), Buffer.from(encodeUcs2('Olá'))]);
    expect(await send(rig, { source_addr: '353861234567', destination_addr: SHORT_CODE, esm_class: UDHI, data_coding: DATA_CODING_UCS2, short_message: hex(ucs2) })).toBe(0);
    const stored = await until(() => texts(rig.path), (t) => t.length === 3, 10_000, 'three messages stored');
    // The octets as GSM-7 septets, the UDHL octet 0x20 (a space) and the IE octets 0x00 0x03 ('@', '¥') included.
    expect(stored[0]).toBe(' @¥Hello!');
    expect(stored[1]).toBe('Hi there');
    // 0x7F read as the first octet of a UCS-2 pair, as the header was not one: the text is not empty.
    expect(stored[2]).not.toBe('');
    expect(stored[2]?.length).toBeGreaterThan(0);
    const warnings = rig.gateway.logLines.filter((line) => line.includes('"level":40'));
    expect(warnings.filter((line) => line.includes('MO user data header unreadable'))).toHaveLength(2);
    expect(warnings.filter((line) => line.includes('top bit masked') && line.includes('"octets":3'))).toHaveLength(1);
  }, 120_000);

  it('opts out on STOP. and fullwidth ＳＴＯＰ but not on STOP SENDING ME THE BILL?', async () => {
    const rig = await start('mo-optout');
    const mo = (from: string, text: string) => ({ source_addr: from, destination_addr: SHORT_CODE, data_coding: DATA_CODING_UCS2, short_message: hex(encodeUcs2(text)) });
    expect(await send(rig, mo('353861000001', 'STOP.'))).toBe(0);
    expect(await send(rig, mo('353861000002', 'ＳＴＯＰ'))).toBe(0);
    expect(await send(rig, mo('353861000003', ' stop! '))).toBe(0);
    expect(await send(rig, mo('353861000004', 'STOP SENDING ME THE BILL?'))).toBe(0);
    expect(await send(rig, mo('353861000005', 'Unsubscribe...'))).toBe(0);
    await until(() => texts(rig.path), (t) => t.length === 5, 10_000, 'five messages stored');
    const optedOut = readDatabase(rig.path, (db) => db.prepare('SELECT msisdn FROM optouts ORDER BY msisdn').pluck().all());
    expect(optedOut).toEqual(['353861000001', '353861000002', '353861000003', '353861000005']);
  }, 120_000);
});
