// The report live at `/` of serve and demo: the HTML report's page plus the sidecar's own status (sources, relay
// ports), with a small inline script that opens `/ws?view=report` on the same host and swaps in each report frame's
// body. Without script (or while disconnected) it is the report as of the page load.
import type { ReportModel } from '../../core/report/report-model.js';
import { LANDING_REFRESH_SECONDS } from '../landing-self.js';
import { renderReportBody, renderReportDocument } from './report-html.js';

/**
 * Runs in the browser: reconnects with backoff, shows when the page last changed; the frame's html is the server's
 * own rendering of counts and ids (escaped there), the only thing put into the page, and its `updated` the time the
 * server rendered it, formatted there (src/outputs/time-text.ts: the page formats no time itself, so the file, the
 * live page and `tail` read alike). When /ws never opens (a bearer token is configured: browsers cannot send it on a
 * WebSocket) the page reloads itself instead, as the landing page.
 */
const LIVE_SCRIPT = `(function(){
var status=document.getElementById('live-status');var main=document.getElementById('report');var delay=500;var last=null;var opened=false;var failures=0;
function show(text,down){status.textContent=text;status.className=down?'down':'';}
function tick(){if(last!==null)show('live \\u00b7 updated '+last,false);}
function connect(){
  var ws;try{ws=new WebSocket((location.protocol==='https:'?'wss://':'ws://')+location.host+'/ws?view=report');}catch(e){show('live updates unavailable: '+e,true);return;}
  ws.onopen=function(){opened=true;delay=500;show('live \\u00b7 connected',false);};
  ws.onmessage=function(m){var f;try{f=JSON.parse(m.data);}catch(e){return;}
    if(f.type==='report'&&typeof f.html==='string'){main.innerHTML=f.html;last=typeof f.updated==='string'?f.updated:'';document.title='kvsentinel: '+(main.querySelector('[data-verdict]')||{dataset:{verdict:'?'}}).dataset.verdict;main.dataset.updates=String(Number(main.dataset.updates||'0')+1);tick();}};
  ws.onclose=function(){
    if(!opened&&++failures>=2){show('live updates unavailable here; reloading every ${LANDING_REFRESH_SECONDS} s',true);setTimeout(function(){location.reload();},${LANDING_REFRESH_SECONDS * 1000});return;}
    show('live updates disconnected'+(last!==null?' (last update '+last+')':'')+'; retrying\\u2026',true);setTimeout(connect,delay);delay=Math.min(delay*2,10000);};
}
connect();
})();`;

function sidecarSection(sidecarHtml: string): string {
  return `<section id="sidecar" class="page"><h2>The sidecar</h2>${sidecarHtml}</section>`;
}

export function renderLiveReportBody(model: ReportModel, sidecarHtml: string): string {
  return renderReportBody(model, sidecarSection(sidecarHtml));
}

export function renderLiveReportPage(model: ReportModel, sidecarHtml: string): string {
  return renderReportDocument(model, {
    script: LIVE_SCRIPT,
    banner: '<div id="live-status">live · connecting…</div>',
    extra: sidecarSection(sidecarHtml),
  });
}
