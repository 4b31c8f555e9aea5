/** parseJsonInSlices gives JSON.parse's verdict and value, whatever the shape, and yields on large input. */
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, parseJsonInSlices } from '../../src/api/sliced-json.js';

const VALID = [
  '{"a":1}', ' [1, 2 ,3] ', '{"a":[1,{"b":[2,3]},"x\\"y"],"a":2}', '{}', '[]', '"str"', '12', 'null', '[[1,2],[3,[4,5]]]',
  '{"a":"\\\\"}', '{"a":"\\\\\\"b"}', '{"a":{"b":{"c":[1,2,{"d":"}"}]}}}', '[1e5,-0.5,true,false,null]', '{"k":"\u00e9\u2615\ud83d\ude00"}',
  '\n\t{ "text" : "x" , "recipientInfo" : [ { "msisdn" : "1" } , { "msisdn" : "2" } ] }\r\n',
];
const INVALID = ['{"a":}', '[1,]', '[,1]', '{"a":1,}', '{"a" 1}', 'tru', '[tru e]', '{"a":[1 2]}', '[1]x', '{"a":1]', '[{]', '["a\u0000"]', '{"a":"b', '{a:1}', '[01]'];

describe('parseJsonInSlices', () => {
  it.each(VALID)('parses %j as JSON.parse does', async (text) => {
    expect(await parseJsonInSlices(Buffer.from(text, 'utf8'))).toEqual(JSON.parse(text));
  });

  it.each(INVALID)('refuses %j as JSON.parse does', async (text) => {
    expect(() => JSON.parse(text)).toThrow();
    await expect(parseJsonInSlices(Buffer.from(text, 'utf8'))).rejects.toBeInstanceOf(JsonSyntaxError);
  });

  it('keeps __proto__ an own property, as JSON.parse does', async () => {
    const value = (await parseJsonInSlices(Buffer.from('{"__proto__":{"polluted":1}}'))) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
  });

  it('skips a leading BOM, refuses invalid UTF-8 and an empty body with their own kinds', async () => {
    expect(await parseJsonInSlices(Buffer.from('\ufeff{"x":1}', 'utf8'))).toEqual({ x: 1 });
    await expect(parseJsonInSlices(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).rejects.toMatchObject({ kind: 'encoding' });
    await expect(parseJsonInSlices(Buffer.from(' \n '))).rejects.toMatchObject({ kind: 'empty' });
  });

  it('yields to the event loop while parsing a 10 MB array, with the same result', async () => {
    const text = JSON.stringify({ recipientInfo: Array.from({ length: 250_000 }, (_, i) => ({ msisdn: String(i), ClientReference: null })) });
    let yields = 0;
    const value = await parseJsonInSlices(Buffer.from(text), async () => {
      yields++;
    });
    expect(value).toEqual(JSON.parse(text));
    expect(yields).toBeGreaterThan(10);
  });
});
