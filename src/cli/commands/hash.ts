// `kvsentinel hash`: TensorRT-LLM KV block hashes from token ids, exactly as workers and the router compute them.
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { cacheSaltId, formatWireHash, routerWireHashes, wireHashBlocks } from '../../core/hashing/index.js';
import { HASH_ALGOS, type HashAlgo } from '../../core/wire/kv-event.js';
import { parseTokenList } from '../../core/wire/token-list.js';
import { fileErrorText } from '../../sources/file-error-text.js';
import { CliError } from '../cli-error.js';
import { parsePositiveIntOption, parseU64Option } from '../parse-u64.js';

interface HashOptions {
  algo: HashAlgo;
  saltId?: bigint;
  salt?: string;
  loraId?: bigint;
  prompt?: boolean;
  tokensPerBlock?: number;
  tokensFile?: string;
}

function parseTokens(text: string, where: string): Uint32Array {
  const parsed = parseTokenList(text);
  if (!parsed.ok) throw new CliError(`${where}: ${parsed.issue.message}`);
  return parsed.tokens;
}

function readTokensFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`--tokens-file ${path}: cannot read it: ${fileErrorText(err)}`);
  }
}

export function registerHashCommand(program: Command): void {
  program
    .command('hash')
    .description(
      'print KV block hashes, one per line: each BLOCK (comma-separated token ids) chained to the previous, ' +
        'or with --prompt the router chunking of one prompt (last token excluded, partial tail)',
    )
    .argument('[tokens...]', 'BLOCK... (or with --prompt: the prompt token ids)')
    .addOption(new Option('--algo <algo>', 'hash algorithm').choices(HASH_ALGOS).default('v1_block_key'))
    .option('--salt-id <n>', 'cache-salt id (u64) mixed into the first block', (v) => parseU64Option('--salt-id', v))
    .option('--salt <text>', 'cache salt string; its id is sha256(utf8)[:8] little-endian (newest TensorRT-LLM)')
    .option('--lora-id <n>', 'LoRA id (u64)', (v) => parseU64Option('--lora-id', v))
    .option('--prompt', 'hash one prompt the way KvCacheAwareRouter chunks it')
    .option('--tokens-per-block <n>', 'router chunk size (with --prompt)', (v) =>
      parsePositiveIntOption('--tokens-per-block', v),
    )
    .option(
      '--tokens-file <file>',
      'read token ids from a file (commas or whitespace); with --prompt one prompt, else one block per line',
    )
    .action((args: string[], options: HashOptions) => {
      if (options.saltId !== undefined && options.salt !== undefined)
        throw new CliError('give --salt-id or --salt, not both');
      const saltId = options.salt !== undefined ? cacheSaltId(options.salt) : (options.saltId ?? null);
      const chain = { saltId, loraId: options.loraId ?? null };
      const lines: string[] = [];
      if (options.prompt) {
        if (options.tokensPerBlock === undefined) throw new CliError('--prompt needs --tokens-per-block N');
        const text = options.tokensFile !== undefined ? readTokensFile(options.tokensFile) : args.join(',');
        if (options.tokensFile !== undefined && args.length > 0)
          throw new CliError('give token ids or --tokens-file, not both');
        const where = options.tokensFile ?? 'TOKENS';
        const prompt = parseTokens(text, where);
        for (const hash of routerWireHashes(prompt, options.tokensPerBlock, options.algo, chain))
          lines.push(formatWireHash(hash));
      } else {
        if (options.tokensPerBlock !== undefined) throw new CliError('--tokens-per-block goes with --prompt');
        const blockTexts =
          options.tokensFile !== undefined
            ? readTokensFile(options.tokensFile)
                .split('\n')
                .filter((l) => l.trim() !== '')
            : args;
        if (blockTexts.length === 0)
          throw new CliError('no BLOCK given (token ids separated by commas, e.g. 1,2,3,4 5,6)');
        // each BLOCK is one block, whatever its length, chained to the previous one
        const blocks = blockTexts.map((text, i) =>
          parseTokens(
            text,
            options.tokensFile !== undefined ? `${options.tokensFile} line ${i + 1}` : `BLOCK ${i + 1}`,
          ),
        );
        for (const hash of wireHashBlocks(blocks, options.algo, chain)) lines.push(formatWireHash(hash));
      }
      process.stdout.write(lines.length > 0 ? `${lines.join('\n')}\n` : '');
    });
}
