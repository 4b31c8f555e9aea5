/**
 * The opt-out keyword rule: the whole text, normalised (NFKC, case-folded, trimmed, trailing
 * punctuation dropped), equals a keyword normalised the same way.
 */
import { describe, expect, it } from 'vitest';
import { isOptoutText, normalizeKeywordText } from '../../src/inbound/optout-keywords.js';

const KEYWORDS = ['stop', 'stopall', 'unsubscribe'];

describe('opt-out keyword matching', () => {
  it.each(['STOP', 'stop', ' Stop ', 'STOP.', 'STOP!', 'stop!!!', 'STOP ?', 'Stop…', 'ＳＴＯＰ', 'ｓｔｏｐ！', 'ＳＴＯＰ。', 'STOPALL.', 'Unsubscribe...'])('%j opts out', (text) => {
    expect(isOptoutText(text, KEYWORDS)).toBe(true);
  });

  it.each(['STOP SENDING ME THE BILL?', 'STOP please', 'please stop', 'STOPPED', '.STOP', 'S T O P', '', '...', 'STOP 🙏'])('%j does not', (text) => {
    expect(isOptoutText(text, KEYWORDS)).toBe(false);
  });

  it('is off when the client has no keywords', () => {
    expect(isOptoutText('STOP', [])).toBe(false);
  });

  it('normalises keywords configured with punctuation or in fullwidth form the same way', () => {
    expect(isOptoutText('stop', ['ＳＴＯＰ!'])).toBe(true);
    expect(normalizeKeywordText('  ＳＴＯＰ！ ')).toBe('stop');
  });
});
