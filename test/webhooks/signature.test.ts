import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../src/webhooks/index.js';

const body = '{"To":"353871234567","From":"Gate","Status":"DELIVRD","ClientReference":"ref-é"}';

describe('webhook signature (SPEC Authentication point 7)', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of the raw UTF-8 bytes', () => {
    const expected = createHmac('sha256', 's3cret').update(Buffer.from(body, 'utf8')).digest('hex');
    expect(signBody(body, 's3cret')).toBe(`sha256=${expected}`);
    expect(signBody(Buffer.from(body, 'utf8'), 's3cret')).toBe(`sha256=${expected}`);
    expect(signBody(body, 's3cret')).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('verifies a matching header and rejects another secret, another body, uppercase hex and malformed headers', () => {
    const header = signBody(body, 's3cret');
    expect(verifySignature(body, header, 's3cret')).toBe(true);
    expect(verifySignature(Buffer.from(body, 'utf8'), header, 's3cret')).toBe(true);
    expect(verifySignature(body, header, 'other')).toBe(false);
    expect(verifySignature(body.replace('DELIVRD', 'UNDELIV'), header, 's3cret')).toBe(false);
    // Re-serialised JSON (different spacing) is different bytes: the signature no longer matches.
    expect(verifySignature(JSON.stringify(JSON.parse(body), null, 1), header, 's3cret')).toBe(false);
    expect(verifySignature(body, header.toUpperCase().replace('SHA256=', 'sha256='), 's3cret')).toBe(false);
    expect(verifySignature(body, header.slice(0, -1), 's3cret')).toBe(false);
    expect(verifySignature(body, header.slice('sha256='.length), 's3cret')).toBe(false);
    expect(verifySignature(body, undefined, 's3cret')).toBe(false);
    expect(verifySignature(body, '', 's3cret')).toBe(false);
  });
});
