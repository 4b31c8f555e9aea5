import { describe, expect, it } from 'vitest';
import { isPermittedForIreland, planRecipients } from '../../src/campaigns/recipient-plan.js';

const permitted = { senderPermittedForIreland: true };

describe('planRecipients', () => {
  it('stores Irish and UK numbers normalised, other digits unchanged', () => {
    const plan = planRecipients(
      [
        { msisdn: '0871234567', clientReference: null },
        { msisdn: '+353861234567', clientReference: null },
        { msisdn: '00353851234567', clientReference: null },
        { msisdn: '07700900123', clientReference: null },
        { msisdn: '+12025550123', clientReference: null },
      ],
      permitted,
    );
    expect(plan.accepted.map((r) => r.msisdn)).toEqual(['353871234567', '353861234567', '353851234567', '447700900123', '12025550123']);
    expect(plan.skipped).toEqual({ invalid: 0, duplicate: 0, unpermitted: 0, suppressed: 0 });
  });

  it('drops duplicates after normalisation, keeping the first entry and its ClientReference', () => {
    const plan = planRecipients(
      [
        { msisdn: '0871234567', clientReference: 'first' },
        { msisdn: '353871234567', clientReference: 'second' },
        { msisdn: '+353871234567', clientReference: 'third' },
        { msisdn: '00353871234567', clientReference: null },
        { msisdn: '447700900123', clientReference: null },
      ],
      permitted,
    );
    expect(plan.accepted).toEqual([
      { msisdn: '353871234567', clientReference: 'first' },
      { msisdn: '447700900123', clientReference: null },
    ]);
    expect(plan.skipped.duplicate).toBe(3);
  });

  it('skips a number that cannot be normalised and keeps going', () => {
    const plan = planRecipients(
      [{ msisdn: '00', clientReference: 'bad' }, { msisdn: '+00', clientReference: null }, { msisdn: '35312345', clientReference: 'ok' }],
      permitted,
    );
    expect(plan.accepted).toEqual([{ msisdn: '35312345', clientReference: 'ok' }]);
    expect(plan.skipped.invalid).toBe(2);
  });

  it('skips Irish recipients only when the sender is not permitted', () => {
    const requested = [
      { msisdn: '0871234567', clientReference: 'ie' },
      { msisdn: '447700900123', clientReference: 'uk' },
      { msisdn: '0871234567', clientReference: 'ie again' },
    ];
    const plan = planRecipients(requested, { senderPermittedForIreland: false });
    expect(plan.accepted).toEqual([{ msisdn: '447700900123', clientReference: 'uk' }]);
    expect(plan.skipped).toEqual({ invalid: 0, duplicate: 1, unpermitted: 1, suppressed: 0 });
  });
});

describe('isPermittedForIreland', () => {
  it.each<[number | undefined, boolean]>([[0, true], [2, true], [1, false], [undefined, false]])(
    'sender type %s -> %s',
    (type, expected) => {
      expect(isPermittedForIreland(type)).toBe(expected);
    },
  );
});
