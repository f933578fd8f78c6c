// PromQL checks shared by the dashboard and rule tests: strict lezer parsing, Grafana variable substitution, and
// the metric names an expression selects.
import { parser } from '@prometheus-io/lezer-promql';
import { METRICS } from '../../src/outputs/metric-catalog.js';

const strictParser = parser.configure({ strict: true });

type Tree = ReturnType<typeof parser.parse>;
export type PromNode = Tree['topNode'];

/** Parses strictly: a syntax error throws with the expression and position. */
export function parsePromql(expr: string): Tree {
  try {
    return strictParser.parse(expr);
  } catch (err) {
    throw new Error(`PromQL does not parse (${(err as Error).message}): ${expr}`, { cause: err });
  }
}

const GRAFANA_RANGES = new Set(['__rate_interval', '__interval', '__range', '__range_s', '__interval_ms']);

/**
 * Replaces Grafana variables outside string literals as Grafana would before sending the query: $__rate_interval,
 * $__interval and $__range become 5m, any other $var or ${var} becomes the literal 1. Variables inside quotes
 * ("$job") stay: they are label regexes to PromQL.
 */
export function substituteGrafanaVariables(expr: string): string {
  let out = '';
  let quote: string | null = null;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i] ?? '';
    if (quote !== null) {
      out += c;
      if (c === '\\' && quote !== '`') {
        out += expr[i + 1] ?? '';
        i++;
      } else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      quote = c;
      out += c;
      continue;
    }
    if (c === '$') {
      const m = /^\$(?:\{(\w+)(?::\w+)?\}|(\w+))/.exec(expr.slice(i));
      if (m !== null) {
        const name = m[1] ?? m[2] ?? '';
        out += GRAFANA_RANGES.has(name) ? '5m' : '1';
        i += m[0].length - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

export interface SelectorInfo {
  /** Metric name from the identifier or a {__name__="…"} matcher; null when neither is present. */
  readonly name: string | null;
  /** Label matchers as `label op "value"` strings, value unquoted. */
  readonly matchers: readonly { label: string; op: string; value: string }[];
  /** The enclosing function when the selector is the range argument of a function call (rate, increase, …). */
  readonly rangeFunction: string | null;
  readonly node: PromNode;
}

function unquote(literal: string): string {
  const q = literal[0];
  const body = literal.slice(1, -1);
  return q === '`' ? body : body.replace(/\\(.)/g, '$1');
}

/** Every vector selector of a parsed expression, with its metric name, matchers and range function. */
export function selectorsOf(expr: string): SelectorInfo[] {
  const tree = parsePromql(expr);
  const out: SelectorInfo[] = [];
  const text = (n: PromNode): string => expr.slice(n.from, n.to);
  tree.iterate({
    enter: (ref) => {
      if (ref.name !== 'VectorSelector') return;
      const node = ref.node;
      const ident = node.getChild('Identifier');
      const matchers: { label: string; op: string; value: string }[] = [];
      const list = node.getChild('LabelMatchers');
      if (list !== null) {
        for (let m = list.firstChild; m !== null; m = m.nextSibling) {
          if (m.name !== 'UnquotedLabelMatcher' && m.name !== 'QuotedLabelMatcher' && m.name !== 'LabelMatcher')
            continue;
          const label = m.getChild('LabelName') ?? m.getChild('QuotedLabelName');
          const op = m.getChild('MatchOp');
          const value = m.getChild('StringLiteral');
          if (label === null || op === null || value === null) continue;
          const labelText = label.name === 'QuotedLabelName' ? unquote(text(label)) : text(label);
          matchers.push({ label: labelText, op: text(op), value: unquote(text(value)) });
        }
      }
      let name = ident === null ? null : text(ident);
      if (name === null) name = matchers.find((m) => m.label === '__name__' && m.op === '=')?.value ?? null;
      let rangeFunction: string | null = null;
      const matrix = node.parent;
      if (matrix?.name === 'MatrixSelector') {
        const call = matrix.parent?.parent;
        if (call?.name === 'FunctionCall') {
          const fn = call.getChild('FunctionIdentifier');
          if (fn !== null) rangeFunction = text(fn);
        }
      }
      out.push({ name, matchers, rangeFunction, node });
    },
  });
  return out;
}

export type SeriesKind = 'counter' | 'gauge' | 'histogram-part' | 'recorded' | 'builtin';

/**
 * What a selected name is: an exporter family (counter or gauge), a histogram's _bucket/_sum/_count, a recording
 * rule, or a series Prometheus or prom-client's default collectors provide. Null for anything else.
 */
export function classifyMetricName(name: string, recordingRules: ReadonlySet<string>): SeriesKind | null {
  if (recordingRules.has(name)) return 'recorded';
  if (name === 'up' || name === 'ALERTS' || name === 'ALERTS_FOR_STATE' || /^(process|nodejs)_/.test(name))
    return 'builtin';
  for (const m of Object.values(METRICS)) {
    if (m.type === 'histogram') {
      if (name === `${m.name}_bucket` || name === `${m.name}_sum` || name === `${m.name}_count`)
        return 'histogram-part';
    } else if (name === m.name) {
      return m.type;
    }
  }
  return null;
}
