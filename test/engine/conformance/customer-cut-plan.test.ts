/**
 * How the engine plans a campaign an SMPP customer submitted (campaigns.smpp_submit): pure, the
 * same on both backends. With a concatenation header its part is one segment in the customer's
 * coding, never re-split; without one the SMS core plans the text as any campaign's; a stored cut
 * the engine cannot read, or a part that cannot go as cut, is one segment that fails permanently.
 */
import { describe, expect, it } from 'vitest';
import { makePlan, type CampaignTexts } from '../../../src/engine/campaign-plans.js';

function campaign(text: string, smppSubmit: unknown): CampaignTexts {
  return { id: 'c1', sender: 'Acme', text, text_sent: text, smpp_submit: smppSubmit === null ? null : JSON.stringify(smppSubmit) };
}

const stored = (dataCoding: number, concat: unknown): Record<string, unknown> => ({ dataCoding, concat, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 });

describe('planning a customer\'s submit', () => {
  it('plans a part with a header as exactly one segment in the customer\'s coding, the text as sent (no replacements)', () => {
    const text = `It’s ${'x'.repeat(60)}`;
    const plan = makePlan(campaign(text, stored(8, { scheme: 'udh16', reference: 0x1234, total: 3, sequence: 2 })));
    expect(plan.segments).toEqual([text]);
    expect(plan.encoding).toBe('UCS-2');
    expect(plan.customerCut).toEqual({ dataCoding: 8, concat: { scheme: 'udh16', reference: 0x1234, total: 3, sequence: 2 } });
    expect(plan.refusal).toBeUndefined();
  });

  it('plans a Latin-1 part as GSM-7 when every character is in GSM-7, else UCS-2, keeping data_coding 3 for the transports that can send it', () => {
    const gsm = makePlan(campaign('café', stored(3, { scheme: 'sar', reference: 1, total: 2, sequence: 1 })));
    const ucs = makePlan(campaign('Côte', stored(3, { scheme: 'sar', reference: 1, total: 2, sequence: 1 })));
    expect([gsm.encoding, gsm.customerCut?.dataCoding, ucs.encoding, ucs.customerCut?.dataCoding]).toEqual(['GSM-7', 3, 'UCS-2', 3]);
  });

  it('plans a message_payload (no header) as the SMS core plans any text: several parts when long, GSM-7 or UCS-2 as it needs', () => {
    const long = makePlan(campaign('a'.repeat(200), stored(0, null)));
    expect(long.segments.map((s) => s.length)).toEqual([153, 47]);
    expect(long.customerCut).toBeUndefined();
    const latin = makePlan(campaign('Côte '.repeat(20), stored(3, null)));
    expect([latin.encoding, latin.segments.length]).toEqual(['UCS-2', 2]);
    const ucs2AsGsm = makePlan(campaign('Hello', stored(8, null)));
    expect(ucs2AsGsm.encoding).toBe('GSM-7');
  });

  it('refuses, as one segment failing permanently, a cut that does not fit or that the engine cannot read', () => {
    const cases: [unknown, string, string][] = [
      [stored(0, { scheme: 'udh8', reference: 1, total: 2, sequence: 1 }), 'x'.repeat(154), 'CUSTOMER_PART_TOO_LONG'],
      [stored(0, { scheme: 'udh8', reference: 1, total: 2, sequence: 1 }), 'Ж', 'CUSTOMER_PART_UNENCODABLE'],
      [stored(4, { scheme: 'udh8', reference: 1, total: 2, sequence: 1 }), 'x', 'CUSTOMER_CUT_INVALID'],
      [stored(0, { scheme: 'udh8', reference: 256, total: 2, sequence: 1 }), 'x', 'CUSTOMER_CUT_INVALID'],
      [stored(0, { scheme: 'udh16', reference: 1, total: 2, sequence: 3 }), 'x', 'CUSTOMER_CUT_INVALID'],
      [stored(0, { scheme: 'udh7', reference: 1, total: 2, sequence: 1 }), 'x', 'CUSTOMER_CUT_INVALID'],
    ];
    for (const [cut, text, status] of cases) {
      const plan = makePlan(campaign(text, cut));
      expect([plan.segments, plan.refusal?.status, plan.customerCut]).toEqual([[text], status, undefined]);
    }
    expect(makePlan({ ...campaign('x', null), smpp_submit: '{not json' }).refusal?.status).toBe('CUSTOMER_CUT_INVALID');
    // SAR: the UDH the SMSC builds from the TLVs counts, as the SMPP server's intake counts it (8-bit reference up to 255, 16-bit beyond).
    const sar = (reference: number): unknown => stored(0, { scheme: 'sar', reference, total: 2, sequence: 1 });
    expect(makePlan(campaign('A'.repeat(153), sar(7))).refusal).toBeUndefined();
    expect(makePlan(campaign('A'.repeat(154), sar(7))).refusal?.status).toBe('CUSTOMER_PART_TOO_LONG');
    expect(makePlan(campaign('A'.repeat(153), sar(700))).refusal?.status).toBe('CUSTOMER_PART_TOO_LONG');
    // One reader for the stored cut: a field the receipt needs (registered_delivery, source ton/npi) missing or not an octet is as unreadable to the planner.
    const header = { scheme: 'udh8', reference: 1, total: 2, sequence: 1 };
    for (const broken of [{ dataCoding: 0, concat: header, sourceAddrTon: 5, sourceAddrNpi: 0 }, { ...stored(0, header), sourceAddrTon: 256 }, { ...stored(0, header), sourceAddrNpi: '0' }]) {
      expect(makePlan(campaign('x', broken)).refusal?.status, JSON.stringify(broken)).toBe('CUSTOMER_CUT_INVALID');
    }
  });

  it('leaves an HTTP campaign (no smpp_submit) as it was: the text after replacements, cut by the SMS core', () => {
    const plan = makePlan(campaign(`It’s ${'y'.repeat(200)}`, null));
    expect(plan.segments.join('')).toBe(`It's ${'y'.repeat(200)}`);
    expect([plan.encoding, plan.segments.length, plan.customerCut, plan.refusal]).toEqual(['GSM-7', 2, undefined, undefined]);
  });
});
