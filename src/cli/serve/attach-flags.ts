// `--attach URL` on `audit` and `record`: read a running sidecar's observation stream instead of owning sources.
// The one-shot way that leaves routing untouched when it ends (the sidecar keeps its relay ports).
import type { Command } from 'commander';
import { readAt } from '../../app/config/config-values.js';
import * as values from '../../app/config/config-values.js';
import { CliError } from '../cli-error.js';
import type { SourceOptionValues } from './source-flags.js';

export function addAttachOptions(command: Command): Command {
  return command
    .option(
      '--attach <url>',
      "a running kvsentinel serve's web address (e.g. http://127.0.0.1:9464): read what it observes; owns no relay port, so routing is untouched when this ends",
    )
    .option(
      '--attach.bearer-token-file <file>',
      'the bearer token the sidecar asks for (its --web.bearer-token-file), when it has one',
    );
}

export interface AttachOptionValues {
  attach?: string;
  'attach.bearerTokenFile'?: string;
}

const SOURCE_FLAGS: readonly (keyof SourceOptionValues)[] = [
  'config',
  'config.file',
  'relay',
  'ctx',
  'zmq',
  'zmqBind',
  'events',
  'routerDebug',
  'requests',
  'orchestratorLog',
];

/** The sidecar to attach to, or null without --attach; refuses --attach beside source flags. */
export function attachTarget(
  options: AttachOptionValues & SourceOptionValues,
): { readonly url: string; readonly bearerToken: string | null } | null {
  if (options.attach === undefined) {
    if (options['attach.bearerTokenFile'] !== undefined)
      throw new CliError('--attach.bearer-token-file: only with --attach URL');
    return null;
  }
  const given = SOURCE_FLAGS.filter((k) => options[k] !== undefined);
  if (given.length > 0)
    throw new CliError(
      `--attach reads a running sidecar's sources: give it without source flags (here ${given.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')})`,
    );
  const file = options['attach.bearerTokenFile'];
  return {
    url: options.attach,
    bearerToken: file === undefined ? null : readAt('--attach.bearer-token-file', values.bearerTokenFromFile, file),
  };
}
