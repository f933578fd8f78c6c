// Loads the provisioning-ready dashboards in dashboards/ and flattens their panels and query targets.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export const DASHBOARD_DIR = join(repoRoot, 'dashboards');

export interface DashTarget {
  readonly refId?: string;
  readonly expr?: string;
  readonly format?: string;
  readonly instant?: boolean;
  readonly datasource?: { type?: string; uid?: string };
}
export interface DashPanel {
  readonly id?: number;
  readonly type: string;
  readonly title?: string;
  readonly description?: string;
  readonly datasource?: { type?: string; uid?: string };
  readonly fieldConfig?: { defaults?: { unit?: string } };
  readonly gridPos?: { h: number; w: number; x: number; y: number };
  readonly targets?: DashTarget[];
  readonly panels?: DashPanel[];
}
export interface DashVariable {
  readonly name: string;
  readonly type: string;
  readonly query?: unknown;
  readonly datasource?: { type?: string; uid?: string };
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
  readonly refresh?: number;
  readonly label?: string;
}
export interface Dashboard {
  readonly uid?: string;
  readonly id?: number | null;
  readonly title?: string;
  readonly tags?: string[];
  readonly editable?: boolean;
  readonly schemaVersion?: number;
  readonly graphTooltip?: number;
  readonly time?: { from: string; to: string };
  readonly refresh?: string;
  readonly templating?: { list: DashVariable[] };
  readonly panels?: DashPanel[];
  readonly __inputs?: unknown;
}

export interface LoadedDashboard {
  readonly file: string;
  readonly raw: string;
  readonly json: Dashboard;
}

export function loadDashboards(): LoadedDashboard[] {
  return readdirSync(DASHBOARD_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const raw = readFileSync(join(DASHBOARD_DIR, file), 'utf8');
      return { file, raw, json: JSON.parse(raw) as Dashboard };
    });
}

/** Every non-row panel, including those nested in collapsed rows. */
export function panelsOf(d: Dashboard): DashPanel[] {
  const out: DashPanel[] = [];
  const walk = (ps: readonly DashPanel[]): void => {
    for (const p of ps) {
      if (p.type === 'row') walk(p.panels ?? []);
      else out.push(p);
    }
  };
  walk(d.panels ?? []);
  return out;
}

export interface QueryRef {
  readonly dashboard: string;
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
}

export function queriesOf(d: LoadedDashboard): QueryRef[] {
  return panelsOf(d.json).flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      dashboard: d.file,
      panel: p.title ?? '?',
      refId: t.refId ?? '?',
      expr: t.expr ?? '',
    })),
  );
}
