/**
 * What a message text costs and how it is cut: the specification's replacements first, then
 * encoding detection and the part count (analyzeText, allocation-free for the hot path), or the
 * full plan with per-part texts (planMessage). Both use chooseLayout, so they always agree.
 */
import { chooseLayout, splitSegments, type Encoding, type SmsOptions } from './message-layout.js';
import type { NationalLanguage } from './national-languages.js';
import { applyReplacements } from './replacements.js';

export interface TextAnalysis {
  encoding: Encoding;
  /** GSM-7 septets (an extension character counts 2) or UCS-2 UTF-16 code units (an emoji counts 2). */
  units: number;
  parts: number;
  /** The text after the specification's replacements: what is sent. */
  text: string;
}

export interface MessagePlan extends TextAnalysis {
  /** Per-part texts; segments.join('') === text. */
  segments: string[];
  /** Set only when a national single shift table (TS 23.038 Annex A.2) is used. */
  singleShift?: NationalLanguage;
  /** Set only when a national locking shift table (TS 23.038 Annex A.3) is used. */
  lockingShift?: NationalLanguage;
}

/** Encoding, units and parts of a text, counted by the real split without building the parts. */
export function analyzeText(raw: string, options?: SmsOptions): TextAnalysis {
  const text = applyReplacements(raw);
  const { layout, count } = chooseLayout(text, options);
  return { encoding: layout.encoding, units: count.units, parts: count.parts, text };
}

/** The analysis plus the per-part texts and any national shift tables used. */
export function planMessage(raw: string, options?: SmsOptions): MessagePlan {
  const text = applyReplacements(raw);
  const { layout, count } = chooseLayout(text, options);
  const plan: MessagePlan = {
    encoding: layout.encoding,
    units: count.units,
    parts: count.parts,
    text,
    segments: splitSegments(text, layout, count.units),
  };
  if (layout.singleShift !== undefined) plan.singleShift = layout.singleShift;
  if (layout.lockingShift !== undefined) plan.lockingShift = layout.lockingShift;
  return plan;
}
