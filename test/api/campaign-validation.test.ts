/**
 * Every rule of SPEC.md "Create Campaign Request" and "Recipient", with its boundary numbers,
 * through the real HTTP API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';

type Body = Record<string, unknown>;
const base = (): Body => ({ text: 'Hello', from: 'Acme', recipientInfo: [{ msisdn: '353871234567' }] });
const withField = (name: string, value: unknown): Body => ({ ...base(), [name]: value });
const without = (name: string): Body => {
  const body = base();
  delete body[name];
  return body;
};
const withRecipient = (recipient: unknown): Body => ({ ...base(), recipientInfo: [recipient] });
const digits = (n: number): string => '1'.repeat(n);
const EMOJI = '\u{1F600}'; // two UTF-16 code units

let fixture: ApiFixture;
let admin: Account;

beforeAll(async () => {
  fixture = await startApiFixture({ startProcessor: false });
  admin = await fixture.createAccount();
});
afterAll(async () => {
  await fixture.close();
});

async function post(body: Body): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fixture.postCampaign(admin.token, body);
  if (res.status === 400) {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  }
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function storedCampaign(id: unknown): Record<string, unknown> {
  return fixture.store.db.prepare('SELECT * FROM campaigns WHERE id = ?').get(id) as Record<string, unknown>;
}

describe('accepted requests (202)', () => {
  it.each<[string, Body]>([
    ['text of 1 character', withField('text', 'x')],
    ['text of 2000 characters', withField('text', 'a'.repeat(2000))],
    ['text of 1000 emoji (2000 UTF-16 units)', withField('text', EMOJI.repeat(1000))],
    ['text with surrounding whitespace', withField('text', '  hi  ')],
    ['from of 11 characters', withField('from', 'ABCDEFGHIJK')],
    ['from of 11 characters with symbols and spaces', withField('from', 'A&B C.D-E!?')],
    ['from of 20 digits', withField('from', digits(20))],
    ['from 49999 (below the reserved range)', withField('from', '49999')],
    ['from 60000 (above the reserved range)', withField('from', '60000')],
    ['from padded to 13 characters that trims to 11', withField('from', ' ABCDEFGHIJK ')],
    ['msisdn of 1 digit', withRecipient({ msisdn: '1' })],
    ['msisdn of 20 digits', withRecipient({ msisdn: digits(20) })],
    ['msisdn of + and 19 digits (20 characters)', withRecipient({ msisdn: `+${digits(19)}` })],
    ['ClientReference of 30 characters', withRecipient({ msisdn: '1', ClientReference: 'c'.repeat(30) })],
    ['ClientReference null', withRecipient({ msisdn: '1', ClientReference: null })],
    ['ClientReference empty', withRecipient({ msisdn: '1', ClientReference: '' })],
    ['campaignName of 1 character', withField('campaignName', 'n')],
    ['campaignName of 30 characters', withField('campaignName', 'n'.repeat(30))],
    ['sendAt yyyy-MM-ddTHH:mm', withField('sendAt', '2026-05-01T10:00')],
    ['sendAt yyyy-MM-ddTHH:mm:ss', withField('sendAt', '2026-05-01T10:00:59')],
    ['sendAt yyyy-MM-dd HH:mm', withField('sendAt', '2026-05-01 10:00')],
    ['sendAt yyyy-MM-dd HH:mm:ss', withField('sendAt', '2026-05-01 23:59:00')],
    ['sendAt null', withField('sendAt', null)],
    ['sendAt in the past', withField('sendAt', '2000-01-01T00:00')],
    ['sendAt far in the future', withField('sendAt', '9999-12-31T23:59')],
    ['sendAt on a leap day', withField('sendAt', '2028-02-29T12:00')],
    ['sendAt in the spring DST gap', withField('sendAt', '2026-03-29T01:30')],
    ['createAsDraft false', withField('createAsDraft', false)],
    ['shouldSaveList true', withField('shouldSaveList', true)],
    ['many recipients', { ...base(), recipientInfo: Array.from({ length: 50 }, (_, i) => ({ msisdn: `35387${i}` })) }],
  ])('%s', async (_name, body) => {
    const { status, json } = await post(body);
    expect(json).toMatchObject({ message: 'Campaign received to be processed' });
    expect(status).toBe(202);
  });

  it('stores from trimmed and campaignName exactly as supplied', async () => {
    const { json } = await post({ ...base(), from: '  Acme  ', campaignName: '  Spring sale ' });
    expect(storedCampaign(json['id'])).toMatchObject({ sender: 'Acme', name: '  Spring sale ', state: 'queued' });
  });

  it('defaults campaignName to API Broadcast and the booleans to false', async () => {
    const { json } = await post(base());
    expect(storedCampaign(json['id'])).toMatchObject({
      name: 'API Broadcast', create_as_draft: 0, should_save_list: 0, send_at_local: null,
    });
  });

  it('stores a draft as draft, with its flags', async () => {
    const { json } = await post({ ...base(), createAsDraft: true, shouldSaveList: true, sendAt: '2026-06-01 09:00' });
    expect(storedCampaign(json['id'])).toMatchObject({
      state: 'draft', create_as_draft: 1, should_save_list: 1, send_at_local: '2026-06-01 09:00',
    });
  });
});

describe('rejected requests (400 Validation Error naming the field)', () => {
  it.each<[string, Body, string]>([
    ['text missing', without('text'), 'text is required'],
    ['text null', withField('text', null), 'text is required'],
    ['text empty', withField('text', ''), 'text must not be empty'],
    ['text only whitespace', withField('text', ' \t\n '), 'text must contain a non-whitespace character'],
    ['text of 2001 characters', withField('text', 'a'.repeat(2001)), 'text must be at most 2000 characters'],
    ['text of 1000 emoji and one more unit', withField('text', `${EMOJI.repeat(1000)}a`), 'text must be at most 2000 characters'],
    ['text a number', withField('text', 5), 'text must be a string'],
    ['text an array', withField('text', ['a']), 'text must be a string'],
    ['from missing', without('from'), 'from is required'],
    ['from null', withField('from', null), 'from is required'],
    ['from empty', withField('from', ''), 'from must not be empty'],
    ['from only spaces', withField('from', '   '), 'from'],
    ['from of 12 characters', withField('from', 'ABCDEFGHIJKL'), 'from'],
    ['from of 21 digits', withField('from', digits(21)), 'from'],
    ['from 50000 (reserved)', withField('from', '50000'), 'from'],
    ['from 59999 (reserved)', withField('from', '59999'), 'from'],
    ['from 55555 with spaces (reserved after trimming)', withField('from', ' 55555 '), 'from'],
    ['from a number', withField('from', 12345), 'from must be a string'],
    ['from with a NUL inside', withField('from', 'Ac\u0000me'), 'from must not contain control characters'],
    ['from with a tab inside', withField('from', 'Ac\tme'), 'from must not contain control characters'],
    ['recipientInfo missing', without('recipientInfo'), 'recipientInfo is required'],
    ['recipientInfo null', withField('recipientInfo', null), 'recipientInfo is required'],
    ['recipientInfo empty', withField('recipientInfo', []), 'recipientInfo must contain at least 1'],
    ['recipientInfo an object', withField('recipientInfo', { msisdn: '1' }), 'recipientInfo must be an array'],
    ['a recipient that is a string', withRecipient('353871234567'), 'recipientInfo[0] must be an object'],
    ['a recipient without msisdn', withRecipient({ ClientReference: 'x' }), 'recipientInfo[0].msisdn is required'],
    ['the fourth recipient without msisdn', { ...base(), recipientInfo: [{ msisdn: '1' }, { msisdn: '2' }, { msisdn: '3' }, {}] }, 'recipientInfo[3].msisdn is required'],
    ['msisdn null', withRecipient({ msisdn: null }), 'recipientInfo[0].msisdn is required'],
    ['msisdn empty', withRecipient({ msisdn: '' }), 'recipientInfo[0].msisdn must not be empty'],
    ['msisdn of 21 digits', withRecipient({ msisdn: digits(21) }), 'recipientInfo[0].msisdn must be at most 20 characters'],
    ['msisdn of + and 20 digits', withRecipient({ msisdn: `+${digits(20)}` }), 'recipientInfo[0].msisdn must be at most 20 characters'],
    ['msisdn with spaces', withRecipient({ msisdn: '087 123 4567' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with brackets', withRecipient({ msisdn: '(087)1234567' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with hyphens', withRecipient({ msisdn: '087-123-4567' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn only +', withRecipient({ msisdn: '+' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with two +', withRecipient({ msisdn: '++353871234567' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with + inside', withRecipient({ msisdn: '353+871234567' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with letters', withRecipient({ msisdn: '35387abc' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn with non-ASCII digits', withRecipient({ msisdn: '\u0663\u0665\u0663' }), 'recipientInfo[0].msisdn must contain only digits'],
    ['msisdn a number', withRecipient({ msisdn: 353871234567 }), 'recipientInfo[0].msisdn must be a string'],
    ['ClientReference of 31 characters', withRecipient({ msisdn: '1', ClientReference: 'c'.repeat(31) }), 'recipientInfo[0].ClientReference must be at most 30 characters'],
    ['ClientReference a number', withRecipient({ msisdn: '1', ClientReference: 7 }), 'recipientInfo[0].ClientReference must be a string or null'],
    ['campaignName null', withField('campaignName', null), 'campaignName must be a string'],
    ['campaignName empty', withField('campaignName', ''), 'campaignName must not be empty'],
    ['campaignName only spaces', withField('campaignName', '   '), 'campaignName must contain a non-whitespace character'],
    ['campaignName of 31 characters', withField('campaignName', 'n'.repeat(31)), 'campaignName must be at most 30 characters'],
    ['campaignName a number', withField('campaignName', 1), 'campaignName must be a string'],
    ['sendAt empty', withField('sendAt', ''), 'sendAt must not be empty or blank'],
    ['sendAt blank', withField('sendAt', '   '), 'sendAt must not be empty or blank'],
    ['sendAt with Z', withField('sendAt', '2026-05-01T10:00Z'), 'sendAt'],
    ['sendAt with an offset', withField('sendAt', '2026-05-01T10:00+01:00'), 'sendAt'],
    ['sendAt with a negative offset', withField('sendAt', '2026-05-01T10:00:00-05:00'), 'sendAt'],
    ['sendAt with fractional seconds', withField('sendAt', '2026-05-01T10:00:00.000'), 'sendAt'],
    ['sendAt date only', withField('sendAt', '2026-05-01'), 'sendAt'],
    ['sendAt without zero padding', withField('sendAt', '2026-5-1T10:00'), 'sendAt'],
    ['sendAt with a lower-case t', withField('sendAt', '2026-05-01t10:00'), 'sendAt'],
    ['sendAt with a leading space', withField('sendAt', ' 2026-05-01T10:00'), 'sendAt'],
    ['sendAt with a trailing space', withField('sendAt', '2026-05-01T10:00 '), 'sendAt'],
    ['sendAt hour only', withField('sendAt', '2026-05-01T10'), 'sendAt'],
    ['sendAt in another format', withField('sendAt', '01/05/2026 10:00'), 'sendAt'],
    ['sendAt 30 February', withField('sendAt', '2026-02-30T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt 29 February of a common year', withField('sendAt', '2026-02-29T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt 31 April', withField('sendAt', '2026-04-31T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt month 13', withField('sendAt', '2026-13-01T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt month 00', withField('sendAt', '2026-00-10T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt day 00', withField('sendAt', '2026-05-00T10:00'), 'sendAt is not a real calendar date'],
    ['sendAt 24:00', withField('sendAt', '2026-05-01T24:00'), 'sendAt is not a real time of day'],
    ['sendAt minute 60', withField('sendAt', '2026-05-01T10:60'), 'sendAt is not a real time of day'],
    ['sendAt second 60', withField('sendAt', '2026-05-01T10:00:60'), 'sendAt is not a real time of day'],
    ['sendAt a number', withField('sendAt', 1767225600000), 'sendAt must be a string or null'],
    ['createAsDraft the string "true"', withField('createAsDraft', 'true'), 'createAsDraft must be a boolean'],
    ['createAsDraft 1', withField('createAsDraft', 1), 'createAsDraft must be a boolean'],
    ['createAsDraft null', withField('createAsDraft', null), 'createAsDraft must be a boolean'],
    ['shouldSaveList the string "false"', withField('shouldSaveList', 'false'), 'shouldSaveList must be a boolean'],
  ])('%s', async (_name, body, detail) => {
    const { status, json } = await post(body);
    expect(json).toMatchObject({ title: 'Validation Error', status: 400 });
    expect(String(json['detail'])).toContain(detail);
    expect(status).toBe(400);
  });

  it('names every failing field in one detail', async () => {
    const { json } = await post({ recipientInfo: [{ msisdn: 'x' }, {}] });
    const detail = String(json['detail']);
    for (const part of ['text is required', 'from is required', 'recipientInfo[0].msisdn must contain only digits', 'recipientInfo[1].msisdn is required']) {
      expect(detail).toContain(part);
    }
  });

  it('summarises thousands of failures with a count instead of dropping them silently', async () => {
    const { json } = await post({ ...base(), recipientInfo: Array.from({ length: 1000 }, () => ({})) });
    expect(String(json['detail'])).toContain('recipientInfo[0].msisdn is required');
    expect(String(json['detail'])).toContain('and 980 more errors');
  });

  it('stores nothing for a rejected request', async () => {
    const before = fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get();
    await post(withField('text', ''));
    expect(fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get()).toEqual(before);
  });
});
