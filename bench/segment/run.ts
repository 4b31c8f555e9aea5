/**
 * Segment benchmark: smsgate's analyzeText / planMessage against split-sms and
 * sms-segments-calculator on one mixed corpus. Prints every text on which a peer's part count
 * differs from ours with the 3GPP reasoning, then messages per second side by side.
 * Run: npm run bench:segment   (BENCH_SECONDS sets the time per contender, default 1)
 */
import { analyzeText, planMessage, SEGMENT_LIMITS } from '../../src/sms/index.js';
import { buildCorpus, type CorpusText } from './corpus.js';
import { splitSmsCount, splitSmsSplit, twilioCount, type PeerCount } from './peers.js';

const secondsPerContender = Number(process.env['BENCH_SECONDS'] ?? '1');
const corpus = buildCorpus();
const texts = corpus.map((entry) => entry.text);

/** Shows a text compactly: runs of 5+ identical characters as `a×152`, escapes via JSON. */
function display(text: string): string {
  const chars = Array.from(text);
  let out = '';
  for (let i = 0; i < chars.length; ) {
    let run = 1;
    while (chars[i + run] === chars[i]) run++;
    const shown = JSON.stringify(chars[i]).slice(1, -1);
    out += run >= 5 ? `[${shown}×${run}]` : shown.repeat(run);
    i += run;
  }
  return out.length > 160 ? `${out.slice(0, 157)}...` : out;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

const parts = (n: number): string => `${n} part${n === 1 ? '' : 's'}`;

/** Why a peer's count differs from ours, reasoned from the 3GPP rules for this text. */
function explain(entry: CorpusText, peer: PeerCount, peerName: string, countPeer: (text: string) => PeerCount): string {
  const ours = planMessage(entry.text);
  if (ours.text !== entry.text) {
    const onReplaced = countPeer(ours.text);
    return (
      `smsgate sends the text after the specification's replacements (typographic quotes, dashes, ellipsis, bullet), which is all GSM-7; ` +
      `${peerName} counts the raw text. Given the replaced text ${peerName} says ${onReplaced.encoding} ${parts(onReplaced.parts)}` +
      `${onReplaced.parts === ours.parts ? ', the same as smsgate: both are right for the text each would send' : ''}`
    );
  }
  if (peer.encoding !== ours.encoding) {
    return `${peerName} chose ${peer.encoding}; TS 23.038 §6.2.1: every character is in the default alphabet or extension table, so GSM-7 (${ours.encoding}) is right`;
  }
  // Where do our boundaries fall relative to grapheme clusters?
  let offset = 0;
  const boundaries = new Set(ours.segments.slice(0, -1).map((segment) => (offset += segment.length)));
  for (const { segment, index } of segmenter.segment(entry.text)) {
    for (let cut = index + 1; cut < index + segment.length; cut++) {
      if (boundaries.has(cut)) {
        const codeUnits = segment.length;
        return (
          `${peerName} keeps the grapheme cluster ${JSON.stringify(segment)} (${codeUnits} UTF-16 units, ${Array.from(segment).length} code points) in one part. ` +
          'TS 23.040 §9.2.3.24.1 concatenation is octet-level and the handset reassembles before display; only a surrogate pair must not be cut ' +
          '(half a pair is not UTF-16). smsgate cuts between code points, which is valid and the fewest parts: smsgate is right'
        );
      }
    }
  }
  return `${peerName} counts ${peer.parts}; smsgate's split is the greedy fill (never breaking an escape or surrogate pair), which is minimal: smsgate is right`;
}

/** Independent check of a plan: parts fit, pairs are whole, join gives the text. */
function checkPlan(text: string): string | null {
  const plan = planMessage(text);
  const analysis = analyzeText(text);
  if (analysis.parts !== plan.parts || analysis.units !== plan.units) return 'analyzeText and planMessage disagree';
  if (plan.segments.join('') !== plan.text) return 'segments do not join to the text';
  const limits = plan.encoding === 'GSM-7' ? SEGMENT_LIMITS.gsm7 : SEGMENT_LIMITS.ucs2;
  const limit = plan.parts === 1 ? limits.single : limits.multi;
  for (const segment of plan.segments) {
    const units = plan.encoding === 'GSM-7' ? Array.from(segment).reduce((n, c) => n + ('€[]{}~|^\\\f'.includes(c) ? 2 : 1), 0) : segment.length;
    if (units > limit) return `a part has ${units} units, above ${limit}`;
    if (/^[\udc00-\udfff]/.test(segment) || /[\ud800-\udbff]$/.test(segment)) return 'a surrogate pair is split';
  }
  return null;
}

function compareCounts(): void {
  console.log(`\nCorpus: ${corpus.length} texts, ${texts.reduce((n, t) => n + t.length, 0)} UTF-16 units`);
  const byKind = new Map<string, number>();
  for (const entry of corpus) byKind.set(entry.kind, (byKind.get(entry.kind) ?? 0) + 1);
  console.log(`  ${[...byKind].map(([kind, n]) => `${kind}: ${n}`).join(', ')}`);

  let ownErrors = 0;
  const differences: string[] = [];
  const differenceCount = { 'split-sms': 0, 'sms-segments-calculator': 0 };
  for (const entry of corpus) {
    const problem = checkPlan(entry.text);
    if (problem !== null) {
      ownErrors++;
      console.log(`  SMSGATE WRONG (${problem}): ${display(entry.text)}`);
    }
    const ours = analyzeText(entry.text);
    for (const [peerName, countPeer] of [
      ['split-sms', splitSmsCount],
      ['sms-segments-calculator', twilioCount],
    ] as const) {
      const count = countPeer(entry.text);
      if (count.parts === ours.parts && count.encoding === ours.encoding) continue;
      differenceCount[peerName]++;
      differences.push(
        `  [${entry.kind}] ${display(entry.text)}\n    smsgate ${ours.encoding} ${ours.units} units ${parts(ours.parts)}; ${peerName} ${count.encoding} ${parts(count.parts)}\n    why: ${explain(entry, count, peerName, countPeer)}`,
      );
    }
  }
  console.log(`\nTexts where a peer's count differs from smsgate: split-sms ${differenceCount['split-sms']}, sms-segments-calculator ${differenceCount['sms-segments-calculator']}`);
  for (const line of differences) console.log(line);
  console.log(`\nsmsgate self-check (analyze = split, parts fit, pairs whole): ${ownErrors === 0 ? 'no wrong count' : `${ownErrors} WRONG`}`);
}

interface Measurement {
  name: string;
  /** What the contender's call delivers: a count, the part texts, or both (Twilio's always builds segments). */
  delivers: ReadonlyArray<'count' | 'split'>;
  messagesPerSecond: number;
}

function measure(name: string, delivers: Measurement['delivers'], run: (text: string) => unknown): Measurement {
  let sink = 0;
  for (let warm = 0; warm < 3; warm++) for (const text of texts) sink += run(text) === undefined ? 0 : 1;
  const budgetNs = BigInt(Math.round(secondsPerContender * 1e9));
  const start = process.hrtime.bigint();
  let messages = 0;
  let elapsedNs = 0n;
  do {
    for (const text of texts) sink += run(text) === undefined ? 0 : 1;
    messages += texts.length;
    elapsedNs = process.hrtime.bigint() - start;
  } while (elapsedNs < budgetNs);
  if (sink < 0) console.log(sink); // keeps the results observable so nothing is optimised away
  return { name, delivers, messagesPerSecond: messages / (Number(elapsedNs) / 1e9) };
}

function benchmark(): void {
  const ours = {
    count: measure('smsgate analyzeText', ['count'], (t) => analyzeText(t).parts),
    split: measure('smsgate planMessage', ['count', 'split'], (t) => planMessage(t).segments),
  };
  const peers = [
    measure('split-sms split({summary:true})', ['count'], (t) => splitSmsCount(t).parts),
    measure('split-sms split()', ['count', 'split'], (t) => splitSmsSplit(t)),
    measure('sms-segments-calculator', ['count', 'split'], (t) => twilioCount(t).parts),
  ];
  const fastestPeer = (mode: 'count' | 'split'): number =>
    Math.max(...peers.filter((p) => p.delivers.includes(mode)).map((p) => p.messagesPerSecond));
  const corpusUnits = texts.reduce((n, t) => n + t.length, 0);
  console.log(`\nThroughput on the corpus (${secondsPerContender} s per contender, Node ${process.versions.node}):`);
  console.log(`  ${'contender'.padEnd(34)} ${'gives'.padEnd(12)} ${'messages/s'.padStart(12)} ${'µs/message'.padStart(11)} ${'M units/s'.padStart(10)} ${'vs fastest peer'.padStart(16)}`);
  const row = (m: Measurement, ratio: string): void => {
    console.log(
      `  ${m.name.padEnd(34)} ${m.delivers.join('+').padEnd(12)} ${Math.round(m.messagesPerSecond).toLocaleString('en').padStart(12)} ${(1e6 / m.messagesPerSecond).toFixed(2).padStart(11)} ${((m.messagesPerSecond * corpusUnits) / texts.length / 1e6).toFixed(1).padStart(10)} ${ratio.padStart(16)}`,
    );
  };
  const countRatio = ours.count.messagesPerSecond / fastestPeer('count');
  const splitRatio = ours.split.messagesPerSecond / fastestPeer('split');
  row(ours.count, `${countRatio.toFixed(1)}x`);
  row(ours.split, `${splitRatio.toFixed(1)}x`);
  for (const peer of peers) row(peer, '');
  console.log(`\nGoal (>= 5x the faster peer): analyze ${countRatio.toFixed(1)}x ${countRatio >= 5 ? 'met' : 'NOT met'}, split ${splitRatio.toFixed(1)}x ${splitRatio >= 5 ? 'met' : 'NOT met'}`);
}

compareCounts();
benchmark();
