// Writes the HTML report: to a temporary file beside the target, then renamed, so a reader (or a browser reloading
// it) never sees half a report and a failed write leaves any previous report in place.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import type { ReportModel } from '../../core/report/report-model.js';
import { renderReportDocument } from './report-html.js';

export async function writeReportFile(path: string, model: ReportModel): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, renderReportDocument(model), 'utf8');
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
