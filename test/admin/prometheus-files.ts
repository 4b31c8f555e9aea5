/**
 * Reading the shipped Prometheus rules and Grafana dashboard for the metric names their queries use,
 * and running promtool (Debian package prometheus) on them. promtool missing is a failure that says
 * so, never a skip: these files would otherwise ship unchecked.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export const PROMTOOL = '/usr/bin/promtool';
const METRIC_NAME = /\bsmsgate_[a-zA-Z0-9_:]+/g;

export function promtool(args: readonly string[], input?: string): { status: number | null; output: string } {
  if (!existsSync(PROMTOOL)) {
    throw new Error(`${PROMTOOL} not found: install the prometheus package (apt-get install prometheus); the alert rules and /metrics cannot be checked without it`);
  }
  const result = spawnSync(PROMTOOL, [...args], { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Every `expr` string anywhere in the dashboard (panels, targets, templating), scanned for smsgate_* names. */
export function dashboardMetricNames(path: string): Set<string> {
  const names = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if ((key === 'expr' || key === 'query') && typeof child === 'string') addNames(names, child);
        else walk(child);
      }
    }
  };
  walk(JSON.parse(readFileSync(path, 'utf8')));
  return names;
}

/** The smsgate_* names in the rules file's `expr:` values (one line, or a `|` / `>` block). */
export function rulesMetricNames(path: string): Set<string> {
  const names = new Set<string>();
  for (const expr of ruleExprs(readFileSync(path, 'utf8'))) addNames(names, expr);
  return names;
}

export function ruleExprs(yaml: string): string[] {
  const lines = yaml.split('\n');
  const exprs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)(?:- )?expr:\s*(.*)$/.exec(lines[i] as string);
    if (match === null) continue;
    const indent = (match[1] as string).length;
    const rest = (match[2] as string).trim();
    if (rest !== '|' && rest !== '>' && rest !== '|-' && rest !== '>-') {
      exprs.push(rest);
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && ((lines[i + 1] as string).trim() === '' || /^\s*/.exec(lines[i + 1] as string)![0].length > indent)) block.push((lines[++i] as string).trim());
    exprs.push(block.join(' '));
  }
  return exprs;
}

/**
 * Metric names a scrape exposes: each series' name, and for a histogram its family name too (a
 * query may use smsgate_x_bucket or, in histogram_quantile's input, the family's _bucket series).
 */
export function exposedMetricNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      names.add(line.split(' ')[2] as string);
      continue;
    }
    if (line.startsWith('#')) continue;
    names.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
  }
  return names;
}

function addNames(names: Set<string>, expr: string): void {
  for (const match of expr.matchAll(METRIC_NAME)) names.add(match[0]);
}
