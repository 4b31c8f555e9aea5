/**
 * planSubmit: a decoded submit_sm against its client's facts, with the HTTP campaign path's rules
 * (recipient normalisation, the Irish permitted-sender list, opt-outs, sender rules), the engine's
 * route choice, the price and the client's send rate. Each refusal with its command_status.
 */
import { describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../../src/config/types.js';
import { RouteTable, type TransportCondition } from '../../../src/engine/routing.js';
import { SERVER_STATUS, type ServerStatus, type SmppAccount, type SubmitSmFields } from '../../../src/smpp-server/contracts.js';
import { decodeSubmit } from '../../../src/smpp-server/intake/decode-submit.js';
import { intakeDestination, intakeSender, planSubmit, type SubmitPlan, type SubmitPlanInput } from '../../../src/smpp-server/intake/plan-submit.js';
import { numberingPlanFor } from '../../../src/sms/index.js';
import type { IntakeFacts } from '../../../src/store/smpp-intake-port.js';

const NOW_MS = Date.UTC(2026, 10, 26, 9, 0, 0);
const ACCOUNT: SmppAccount = { id: 7, systemId: 'acme-smpp', clientId: 3, clientName: 'acme', maxBinds: null, allowIps: [] };
const MESSAGE_ID = 'a1b2c3d4-0000-4000-8000-000000000001';
const NUMBERING = numberingPlanFor('IE');
const LISTED: IntakeFacts = { optedOut: false, senderType: 0, partsPerSecond: null };

function fields(overrides: Partial<SubmitSmFields> = {}): SubmitSmFields {
  return {
    serviceType: '', sourceAddrTon: 5, sourceAddrNpi: 0, sourceAddr: 'Acme', destAddrTon: 1, destAddrNpi: 1, destinationAddr: '0871234567',
    esmClass: 0, protocolId: 0, priorityFlag: 0, scheduleDeliveryTime: '', validityPeriod: '', registeredDelivery: 1, dataCoding: 0,
    shortMessage: Buffer.from('Hello'), ...overrides,
  };
}

interface Case {
  fields?: Partial<SubmitSmFields>;
  facts?: IntakeFacts;
  routes?: RouteConfig[];
  running?: Record<string, TransportCondition>;
  pricing?: SubmitPlanInput['pricing'];
  nextPartAtUs?: number;
  nowMs?: number;
}

/** As SubmitIntake runs it: decode, destination and sender, facts (given), plan. */
function plan(c: Case = {}): SubmitPlan {
  const f = fields(c.fields);
  const decoded = decodeSubmit(f);
  if (decoded.kind !== 'decoded') throw new Error('test submit does not decode');
  const destination = intakeDestination(f, NUMBERING);
  const sender = intakeSender(f);
  return planSubmit({
    account: ACCOUNT, fields: f, text: decoded.text, cut: decoded.cut, destination, sender,
    facts: destination.ok && sender !== undefined ? (c.facts ?? LISTED) : undefined,
    routing: {
      routes: new RouteTable(c.routes ?? [{ prefix: '', transport: 'carrier' }]),
      conditions: new Map(Object.entries(c.running ?? { carrier: { up: true } })),
    },
    numbering: NUMBERING, pricing: c.pricing ?? [], nextPartAtUs: c.nextPartAtUs ?? 0, messageId: MESSAGE_ID, spreadKey: 1, nowMs: c.nowMs ?? NOW_MS,
  });
}

const refused = (status: ServerStatus): SubmitPlan => ({ kind: 'refused', status });

describe('planSubmit', () => {
  it('accepts a submit as a one-part message to the normalised destination on the routed transport, priced by the config', () => {
    const planned = plan({ pricing: [{ prefix: '353', creditsPerPart: 3 }] });
    expect(planned).toEqual({
      kind: 'accept',
      nextPartAtUs: null,
      submit: {
        messageId: MESSAGE_ID, clientId: 3, accountId: 7, name: 'SMPP acme-smpp', sender: 'Acme', text: 'Hello', textSent: 'Hello', encoding: 'GSM-7',
        partsPerMessage: 1, smppSubmitJson: JSON.stringify({ dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 }),
        msisdn: '353871234567', creditsPerPart: 3, concatReference: null, transport: 'carrier', dueAtMs: NOW_MS,
      },
    });
  });

  it('splits a whole message (message_payload) into the parts the SMS core cuts, and keeps a cut part one part with its reference', () => {
    const whole = plan({ fields: { shortMessage: Buffer.alloc(0), messagePayload: Buffer.from('W'.repeat(320)) } });
    expect(whole).toMatchObject({ kind: 'accept', submit: { partsPerMessage: 3, text: 'W'.repeat(320) } });
    const cut = plan({ fields: { esmClass: 0x40, shortMessage: Buffer.concat([Buffer.from('050003C80201', 'hex'), Buffer.from('C'.repeat(153))]) } });
    expect(cut).toMatchObject({ kind: 'accept', submit: { partsPerMessage: 1, concatReference: 0xc8, text: 'C'.repeat(153) } });
  });

  it('refuses a destination that is no number with ESME_RINVDSTADR', () => {
    for (const destinationAddr of ['', 'not-a-number', '+353 87 123', '1'.repeat(21)]) {
      expect(plan({ fields: { destinationAddr } })).toEqual(refused(SERVER_STATUS.invalidDestinationAddress));
    }
  });

  it('refuses a sender the sender rules refuse with ESME_RINVSRCADR', () => {
    for (const sourceAddr of ['', '   ', 'TwelveChars!', '55555', '1'.repeat(21), 'Ac\u0001me']) {
      expect(plan({ fields: { sourceAddr } })).toEqual(refused(SERVER_STATUS.invalidSourceAddress));
    }
  });

  it('refuses an Irish destination from a sender not on the permitted list with ESME_RINVSRCADR, as the HTTP path skips it', () => {
    expect(plan({ facts: { ...LISTED, senderType: undefined } })).toEqual(refused(SERVER_STATUS.invalidSourceAddress));
    // Type 1 (international, not approved by the regulator) is not permitted either.
    expect(plan({ facts: { ...LISTED, senderType: 1 } })).toEqual(refused(SERVER_STATUS.invalidSourceAddress));
    expect(plan({ facts: { ...LISTED, senderType: 2 } }).kind).toBe('accept');
    // Outside Ireland the list does not apply.
    expect(plan({ fields: { destinationAddr: '447700900123' }, facts: { ...LISTED, senderType: undefined } }).kind).toBe('accept');
  });

  it('refuses an opted-out destination with ESME_RINVDSTADR', () => {
    expect(plan({ facts: { ...LISTED, optedOut: true } })).toEqual(refused(SERVER_STATUS.invalidDestinationAddress));
  });

  it('refuses a destination no route serves, or whose transport does not run here, with ESME_RSUBMITFAIL', () => {
    expect(plan({ routes: [{ prefix: '44', transport: 'carrier' }] })).toEqual(refused(SERVER_STATUS.submitFailed));
    expect(plan({ running: {} })).toEqual(refused(SERVER_STATUS.submitFailed));
    // A route for another client only.
    expect(plan({ routes: [{ prefix: '', transport: 'carrier', clients: ['other'] }] })).toEqual(refused(SERVER_STATUS.submitFailed));
  });

  it('queues a part outside its route\'s window until the window opens', () => {
    const planned = plan({ routes: [{ prefix: '', transport: 'carrier', window: { from: '10:00', to: '11:00', timeZone: 'UTC' } }] });
    expect(planned).toMatchObject({ kind: 'accept', submit: { dueAtMs: Date.UTC(2026, 10, 26, 10, 0, 0) } });
  });

  it('applies the client\'s send rate: a burst of its rate at once, then ESME_RTHROTTLED until its time comes', () => {
    const rated: IntakeFacts = { ...LISTED, partsPerSecond: 2 };
    const first = plan({ facts: rated });
    expect(first).toMatchObject({ kind: 'accept', nextPartAtUs: NOW_MS * 1000 + 500_000 });
    const second = plan({ facts: rated, nextPartAtUs: (first as { nextPartAtUs: number }).nextPartAtUs });
    expect(second).toMatchObject({ kind: 'accept', nextPartAtUs: NOW_MS * 1000 + 1_000_000 });
    expect(plan({ facts: rated, nextPartAtUs: NOW_MS * 1000 + 1_000_000 })).toEqual(refused(SERVER_STATUS.throttled));
    // Half a second later one part has accrued.
    expect(plan({ facts: rated, nextPartAtUs: NOW_MS * 1000 + 1_000_000, nowMs: NOW_MS + 500 }).kind).toBe('accept');
    // A rate of 0 pauses the client.
    expect(plan({ facts: { ...LISTED, partsPerSecond: 0 } })).toEqual(refused(SERVER_STATUS.throttled));
  });
});
