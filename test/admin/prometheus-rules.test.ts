/**
 * The shipped Prometheus alert rules (config/prometheus/smsgate.rules.yml) are valid and behave:
 * `promtool check rules`, then `promtool test rules` with smsgate.rules.test.yml, whose cases make
 * each alert fire and not fire. promtool missing fails the test (it says how to install it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { promtool, ruleExprs } from './prometheus-files.js';

const DIR = join(import.meta.dirname, '..', '..', 'config', 'prometheus');
const RULES = join(DIR, 'smsgate.rules.yml');
const CASES = join(DIR, 'smsgate.rules.test.yml');
const ALERTS = ['SmsgateBindDown', 'SmsgateNotReady', 'SmsgateWebhooksDeadLettering', 'SmsgateQueueAgeGrowing'];

describe('Prometheus alert rules', () => {
  it('pass promtool check rules', () => {
    const result = promtool(['check', 'rules', RULES]);
    expect(result.output).toContain(`SUCCESS: ${ALERTS.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('pass promtool test rules: each alert fires where it should and not where it should not', () => {
    const result = promtool(['test', 'rules', CASES]);
    expect(result.output).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('give every alert a for:, a summary and a description, and test each one both ways', () => {
    const rules = readFileSync(RULES, 'utf8');
    const blocks = rules.split(/\n\s+- alert: /).slice(1);
    expect(blocks.map((b) => b.split('\n')[0]?.trim())).toEqual(ALERTS);
    for (const block of blocks) {
      expect(block).toMatch(/\n\s+for: \d+m\n/);
      expect(block).toMatch(/\n\s+summary: /);
      expect(block).toMatch(/\n\s+description: /);
    }
    expect(ruleExprs(rules)).toHaveLength(ALERTS.length);
    const cases = readFileSync(CASES, 'utf8');
    for (const alert of ALERTS) {
      const evals = [...cases.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:(.*)`, 'g'))].map((m) => (m[1] as string).trim());
      // One evaluation expecting no alert, one expecting it.
      expect(evals, alert).toContain('[]');
      expect(evals.some((e) => e === ''), alert).toBe(true);
    }
  });
});
