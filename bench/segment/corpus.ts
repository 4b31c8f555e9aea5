/**
 * The benchmark corpus: deterministic (seeded) texts covering short and long GSM-7, long UCS-2,
 * emoji (at part boundaries too), and extension characters placed exactly at part boundaries.
 */
export interface CorpusText {
  kind: 'short GSM-7' | 'long GSM-7' | 'long UCS-2' | 'emoji' | 'extension at boundary' | 'emoji at boundary' | 'typographic';
  text: string;
}

/** mulberry32: a tiny seeded PRNG so every run measures the same corpus. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'your order has shipped and will arrive on Tuesday reply STOP to opt out code 482913 is valid for 10 minutes thanks for visiting Dublin appointment reminder at 14:30 call us on 01 234 5678'.split(' ');
const CYRILLIC = 'Ваш заказ отправлен и прибудет во вторник спасибо за покупку код действителен десять минут'.split(' ');
const CHINESE = '您的订单已发货将于星期二送达验证码十分钟内有效感谢您的光临'.split('');
const EMOJI = ['\u{1F600}', '\u{1F44D}', '\u{1F389}', '\u2764\uFE0F', '\u{1F1EE}\u{1F1EA}', '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}', '\u{1F44B}\u{1F3FD}'];
const EXTENSION = ['€', '[', ']', '{', '}', '~', '|', '^', '\\'];

function words(random: () => number, vocabulary: readonly string[], minLength: number, separator = ' '): string {
  let text = '';
  while (text.length < minLength) text += (text === '' ? '' : separator) + (vocabulary[Math.floor(random() * vocabulary.length)] as string);
  return text;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

export function buildCorpus(seed = 2026): CorpusText[] {
  const random = seededRandom(seed);
  const corpus: CorpusText[] = [];
  for (let i = 0; i < 400; i++) corpus.push({ kind: 'short GSM-7', text: words(random, WORDS, 20 + Math.floor(random() * 130)) });
  for (let i = 0; i < 100; i++) corpus.push({ kind: 'long GSM-7', text: words(random, WORDS, 300 + Math.floor(random() * 1700)) });
  for (let i = 0; i < 60; i++) corpus.push({ kind: 'long UCS-2', text: words(random, CYRILLIC, 100 + Math.floor(random() * 900)) });
  for (let i = 0; i < 40; i++) corpus.push({ kind: 'long UCS-2', text: words(random, CHINESE, 80 + Math.floor(random() * 600), '') });
  for (let i = 0; i < 100; i++) {
    const base = words(random, WORDS, 10 + Math.floor(random() * 300));
    const cut = Math.floor(random() * base.length);
    corpus.push({ kind: 'emoji', text: `${base.slice(0, cut)}${pick(random, EMOJI)}${base.slice(cut)}${pick(random, EMOJI)}` });
  }
  // Extension characters straddling every boundary the split has: 160/161 single, 153/154 and 306/307 multi.
  for (const boundary of [153, 160, 306, 459]) {
    for (let offset = -3; offset <= 1; offset++) {
      const before = 'a'.repeat(boundary + offset);
      corpus.push({ kind: 'extension at boundary', text: `${before}${pick(random, EXTENSION)}${'b'.repeat(1 + Math.floor(random() * 200))}` });
    }
  }
  // Emoji (surrogate pairs, flags, ZWJ families) straddling 67 / 70 / 134 unit boundaries.
  for (const boundary of [67, 70, 134]) {
    for (let offset = -4; offset <= 1; offset++) {
      for (const emoji of EMOJI) {
        const before = 'ж'.repeat(boundary + offset);
        corpus.push({ kind: 'emoji at boundary', text: `${before}${emoji}${'ж'.repeat(Math.floor(random() * 80))}` });
      }
    }
  }
  // Typographic punctuation that the specification replaces before encoding (peers do not).
  const TYPOGRAPHIC = ['\u2019', '\u201c', '\u201d', '\u2013', '\u2026', '\u2022'];
  for (let i = 0; i < 4; i++) {
    const base = words(random, WORDS, 40 + Math.floor(random() * 300));
    const cut = Math.floor(random() * base.length);
    corpus.push({ kind: 'typographic', text: `${base.slice(0, cut)}${pick(random, TYPOGRAPHIC)}${base.slice(cut)}` });
  }
  return corpus;
}
