// The report's one stylesheet, inline in the page (no fonts, no network): screen and A4 print, where every section
// starts a page and no figure, finding or table row is split across pages.
export const REPORT_CSS = `
:root{--fg:#1b1f24;--dim:#57606a;--line:#d0d7de;--bg:#fff;--crit:#b42318;--warn:#9a6700;--ok:#1a7f37;--info:#0969da}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1000px;margin:0 auto;padding:1.5em 1.5em 3em}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.6em 0 .6em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{font-size:1.05em;margin:.2em 0}
.meta,.caption,.dim{color:var(--dim)}.meta{margin:0 0 1em}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:#f6f8fa;border-radius:4px;padding:.05em .3em;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;margin:.4em 0}th,td{border:1px solid var(--line);padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{border-radius:8px;padding:.8em 1em;margin:.6em 0;border:2px solid}
.verdict strong{font-size:1.4em;letter-spacing:.04em;margin-right:.6em}
.verdict.inert{border-color:var(--crit);background:#fff1f0}.verdict.inert strong{color:var(--crit)}
.verdict.degraded{border-color:var(--warn);background:#fff8e5}.verdict.degraded strong{color:var(--warn)}
.verdict.unknown{border-color:var(--dim);background:#f6f8fa}.verdict.unknown strong{color:var(--dim)}
.verdict.healthy{border-color:var(--ok);background:#effaf2}.verdict.healthy strong{color:var(--ok)}
.headline{display:flex;flex-wrap:wrap;gap:.4em 1.4em;margin:.5em 0}.headline div b{display:block;font-size:1.3em}
.strip{display:flex;height:14px;border-radius:3px;overflow:hidden;margin:.3em 0 0}.strip span{display:block;height:100%}
.strip .inert{background:var(--crit)}.strip .degraded{background:#d4a72c}.strip .healthy{background:var(--ok)}.strip .unknown{background:#8c959f}
.finding{border:1px solid var(--line);border-left:6px solid var(--info);border-radius:6px;padding:.6em .9em;margin:.8em 0;break-inside:avoid}
.finding.critical{border-left-color:var(--crit)}.finding.warning{border-left-color:var(--warn)}
.sev{font-weight:700;font-size:.8em;border-radius:3px;padding:.1em .4em;color:#fff;background:var(--info);margin-right:.4em}
.sev.critical{background:var(--crit)}.sev.warning{background:var(--warn)}
.finding dl{display:grid;grid-template-columns:5.5em 1fr;gap:.2em .6em;margin:.4em 0}.finding dt{color:var(--dim)}.finding dd{margin:0}
.finding p.dim{margin:.3em 0 .1em}
.evidence{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.25em .5em}
.evidence li{background:#f6f8fa;border:1px solid var(--line);border-radius:4px;padding:0 .4em;font-size:.92em}
figure{margin:1em 0 1.6em;break-inside:avoid}figcaption{margin:.2em 0}
svg.chart{width:100%;height:auto;display:block;border:1px solid var(--line);border-radius:4px;background:#fff}
svg .grid{stroke:#eaeef2;stroke-width:1}svg .axis{stroke:#8c959f;stroke-width:1}
svg .tick{font:12px system-ui,sans-serif;fill:#57606a}svg .label{font:600 12px system-ui,sans-serif}
svg .series{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}svg .series.total{stroke-width:3.5}
svg .marker{stroke-width:1.5;stroke-dasharray:3 3}svg .marker.gap{stroke:#D55E00}svg .marker.reset{stroke:#6639ba}
.legend{list-style:none;padding:0;margin:.3em 0;display:flex;flex-wrap:wrap;gap:.2em 1.2em;font-size:.92em}
.swatch{display:inline-block;width:22px;height:0;border-top:3px solid;vertical-align:middle;margin-right:.35em}
.swatch.dashed{border-top-style:dashed}.swatch.dotted{border-top-style:dotted}.swatch.dashdot{border-top-style:dashed;border-top-width:2px}.swatch.box{height:11px;border:0;width:14px}
.swatch.marker-gap{border-top:2px dashed #D55E00}.swatch.marker-reset{border-top:2px dashed #6639ba}
#sidecar .up{color:var(--ok)}#sidecar .down,#sidecar .critical{color:var(--crit)}#sidecar .warning{color:var(--warn)}
.nodata,.note{color:var(--dim);font-style:italic}.note{margin:.2em 0 .4em}.nodata{border:1px dashed var(--line);border-radius:4px;padding:1.2em 1em}
@media screen and (min-width:1200px){main{max-width:1320px}#plots .figures{display:grid;grid-template-columns:1fr 1fr;gap:0 2em}}
#live-status{position:sticky;top:0;background:#f6f8fa;border-bottom:1px solid var(--line);padding:.3em 1.5em;font-size:.9em;z-index:1}
#live-status.down{background:#fff1f0}
@media print{
  @page{size:A4;margin:14mm 12mm}
  body{font-size:10.5pt}main{max-width:none;padding:0}
  #live-status{display:none}
  section.page{break-before:page}
  h2{break-after:avoid}tr,figure,.finding{break-inside:avoid}
  a{color:inherit;text-decoration:none}
  .verdict,.strip span,.sev,.swatch.box,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
`;
