// nginx as the relay benchmark's peer: a plain streaming reverse proxy on the same worker, load and cores. The bench
// installs Debian's nginx-light itself when it is missing and it may (root or password-less sudo, apt-get present,
// not a quick run); otherwise the peer rows say why they were not measured.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForHttp } from './net.js';
import { startService } from './proc.js';

const NGINX = '/usr/sbin/nginx';

/** The nginx binary, installing nginx-light first when allowed; a reason when there is none. */
export function ensureNginx(options: { install: boolean }): { path: string; version: string } | { why: string } {
  if (!existsSync(NGINX)) {
    if (!options.install)
      return { why: 'nginx is not installed (quick runs do not install it; a full `npm run bench` does, as root)' };
    const why = installNginxLight();
    if (why !== null) return { why };
  }
  const v = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
  const version = /nginx\/(\S+)/.exec(`${v.stdout}${v.stderr}`)?.[1];
  if (v.status !== 0 || version === undefined)
    return { why: `${NGINX} -v failed: ${`${v.stderr}`.trim().slice(0, 200)}` };
  return { path: NGINX, version };
}

/** Installs Debian's nginx-light; null when done, else why not. Its packaged service is never started. */
function installNginxLight(): string | null {
  if (spawnSync('apt-get', ['--version']).status !== 0)
    return 'nginx is not installed and there is no apt-get to install nginx-light';
  const root = process.getuid?.() === 0;
  const sudo = !root && spawnSync('sudo', ['-n', 'true']).status === 0;
  if (!root && !sudo) return 'nginx is not installed and installing nginx-light needs root (or password-less sudo)';
  const run = (args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(root ? args[0]! : 'sudo', root ? args.slice(1) : args, {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
    return { status: r.status, stderr: `${r.stderr}` };
  };
  // the package's postinst starts nginx on :80 through invoke-rc.d; a policy-rc.d answering 101 refuses that (as
  // .ci/run does for Prometheus), and whatever policy was there is put back
  const policy = '/usr/sbin/policy-rc.d';
  const backup = existsSync(policy) ? join(mkdtempSync(join(tmpdir(), 'kvs-policy-')), 'policy-rc.d') : null;
  try {
    if (root) {
      if (backup !== null) copyFileSync(policy, backup);
      writeFileSync(policy, '#!/bin/sh\nexit 101\n');
      chmodSync(policy, 0o755);
    } else {
      if (backup !== null) run(['cp', '-p', policy, backup]);
      run(['sh', '-c', `printf '#!/bin/sh\\nexit 101\\n' > ${policy} && chmod +x ${policy}`]);
    }
    let r = run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'nginx-light']);
    if (r.status !== 0) {
      run(['apt-get', 'update', '-qq']);
      r = run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'nginx-light']);
    }
    if (r.status !== 0)
      return `apt-get install nginx-light failed: ${r.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300)}`;
    return existsSync(NGINX) ? null : `nginx-light installed but ${NGINX} is missing`;
  } finally {
    if (root) {
      if (backup !== null) copyFileSync(backup, policy);
      else rmSync(policy, { force: true });
    } else if (backup !== null) run(['cp', '-p', backup, policy]);
    else run(['rm', '-f', policy]);
  }
}

export interface NginxProxy {
  readonly url: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * nginx proxying every path to `upstream` the way the relay does: one process (no master, so /proc/PID is all of its
 * CPU), HTTP/1.1 keep-alive to the upstream, request and response bodies streamed (no buffering, no temp files),
 * no access log.
 */
export async function startNginxProxy(
  nginx: string,
  upstream: { host: string; port: number },
  listenPort: number,
): Promise<NginxProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'kvs-nginx-'));
  for (const d of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  const conf = `master_process off;
daemon off;
worker_rlimit_nofile 8192;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream worker {
    server ${upstream.host}:${upstream.port};
    keepalive 512;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
  }
  server {
    listen 127.0.0.1:${listenPort} backlog=4096;
    keepalive_requests 1000000;
    keepalive_timeout 65s;
    client_max_body_size 64m;
    location / {
      proxy_pass http://worker;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_request_buffering off;
      proxy_buffering off;
      proxy_read_timeout 600s;
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const url = `http://127.0.0.1:${listenPort}`;
  const service = await startService(nginx, ['-p', dir, '-e', `${dir}/error.log`, '-c', join(dir, 'nginx.conf')], {
    readyLine: false,
    ready: () => waitForHttp(`${url}/health`),
  });
  return {
    url,
    pid: service.pid,
    stop: async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
