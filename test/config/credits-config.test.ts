/**
 * The credit keys of the config file: `pricing` (rules of a digits prefix and an integer price,
 * empty when left out) and `credits.lowThreshold` (optional integer >= 0). A bad value is a
 * CONFIG_INVALID naming the file and the key, also as `smsgate config check` reports it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { isGatewayError } from '../../src/common/errors.js';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { captureCliOutput } from '../support/cli-output.js';

function rejection(input: unknown): string {
  try {
    resolveConfigFromObject(input, 'c.json', {});
  } catch (err) {
    if (isGatewayError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('pricing and credits keys', () => {
  it('default to no pricing (1 credit a part) and no low threshold', () => {
    const config = resolveConfigFromObject({}, 'c.json', {});
    expect(config.pricing).toEqual([]);
    expect(config.credits).toEqual({});
    expect(config.credits.lowThreshold).toBeUndefined();
  });

  it('give the rules as written and the threshold', () => {
    const pricing = [{ prefix: '353', creditsPerPart: 1 }, { prefix: '1', creditsPerPart: 3 }, { prefix: '', creditsPerPart: 0 }];
    const config = resolveConfigFromObject({ pricing, credits: { lowThreshold: 500 } }, 'c.json', {});
    expect(config.pricing).toEqual(pricing);
    expect(config.credits.lowThreshold).toBe(500);
    expect(resolveConfigFromObject({ credits: { lowThreshold: 0 } }, 'c.json', {}).credits.lowThreshold).toBe(0);
  });

  it('refuse a price that is not a whole number from 0, naming the key', () => {
    expect(rejection({ pricing: [{ prefix: '353', creditsPerPart: -1 }] })).toBe('c.json: pricing[0].creditsPerPart: must be >= 0');
    expect(rejection({ pricing: [{ prefix: '1', creditsPerPart: 3 }, { prefix: '353', creditsPerPart: 1.5 }] })).toBe('c.json: pricing[1].creditsPerPart: must be integer');
    expect(rejection({ pricing: [{ prefix: '353', creditsPerPart: '2' }] })).toBe('c.json: pricing[0].creditsPerPart: must be integer');
    expect(rejection({ pricing: [{ prefix: '353' }] })).toBe('c.json: pricing[0].creditsPerPart: is required');
  });

  it('refuse a prefix that is not digits, a duplicate prefix and an unknown key', () => {
    expect(rejection({ pricing: [{ prefix: '+353', creditsPerPart: 1 }] })).toBe('c.json: pricing[0].prefix: must match pattern "^[0-9]{0,20}$"');
    expect(rejection({ pricing: [{ creditsPerPart: 1 }] })).toBe('c.json: pricing[0].prefix: is required');
    expect(rejection({ pricing: [{ prefix: '353', creditsPerPart: 1 }, { prefix: '353', creditsPerPart: 2 }] }))
      .toBe('c.json: pricing[1].prefix: duplicate pricing prefix "353"');
    expect(rejection({ pricing: [{ prefix: '353', creditsPerPart: 1, credits: 1 }] })).toBe('c.json: pricing[0].credits: unknown key "credits" at /pricing/0');
    expect(rejection({ pricing: { prefix: '353', creditsPerPart: 1 } })).toBe('c.json: pricing: must be array');
  });

  it('refuse a low threshold that is not a whole number from 0, and an unknown credits key', () => {
    expect(rejection({ credits: { lowThreshold: -5 } })).toBe('c.json: credits.lowThreshold: must be >= 0');
    expect(rejection({ credits: { lowThreshold: 2.5 } })).toBe('c.json: credits.lowThreshold: must be integer');
    expect(rejection({ credits: { lowTreshold: 5 } })).toBe('c.json: credits.lowTreshold: unknown key "lowTreshold" at /credits: did you mean "lowThreshold"?');
  });
});

describe('smsgate config check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-credits-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const check = (...args: string[]) => captureCliOutput(() => main(['config', 'check', ...args]));

  function configFile(name: string, config: unknown): string {
    const file = join(dir, name);
    // No listener to find in use: port 0 picks a free one.
    writeFileSync(file, JSON.stringify({ api: { port: 0 }, database: { path: join(dir, 'gw.sqlite') }, ...(config as object) }));
    return file;
  }

  it('reports a bad price and a bad threshold by file and key, exit 1', async () => {
    const badPrice = configFile('bad-price.json', { pricing: [{ prefix: '1', creditsPerPart: -3 }] });
    const price = await check('--config', badPrice);
    expect(price.code).toBe(1);
    expect(price.stderr).toBe(`smsgate: CONFIG_INVALID: ${badPrice}: pricing[0].creditsPerPart: must be >= 0\n`);
    const badThreshold = configFile('bad-threshold.json', { credits: { lowThreshold: 'ten' } });
    const threshold = await check('--config', badThreshold);
    expect(threshold.code).toBe(1);
    expect(threshold.stderr).toBe(`smsgate: CONFIG_INVALID: ${badThreshold}: credits.lowThreshold: must be integer\n`);
  });

  it('prints the pricing and the threshold of a valid file', async () => {
    const good = configFile('good.json', { pricing: [{ prefix: '353', creditsPerPart: 1 }, { prefix: '1', creditsPerPart: 3 }], credits: { lowThreshold: 100 } });
    const checked = await check('--config', good, '--json');
    expect(checked.code).toBe(0);
    const { config } = JSON.parse(checked.stdout) as { config: { pricing: unknown; credits: unknown } };
    expect(config.pricing).toEqual([{ prefix: '353', creditsPerPart: 1 }, { prefix: '1', creditsPerPart: 3 }]);
    expect(config.credits).toEqual({ lowThreshold: 100 });
  });
});
