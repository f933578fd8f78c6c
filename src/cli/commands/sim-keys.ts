// `kvsentinel sim keys`: every key `--set` accepts (sim run, sim serve, demo), what it means, its value in each
// preset, and which ones inject a fault.
import type { Command } from 'commander';
import { describeKnobs, PRESETS } from '../../sim/sim-config.js';

export function registerSimKeysCommand(program: Command): void {
  const sim = program.commands.find((c) => c.name() === 'sim') ?? program.command('sim');
  sim
    .command('keys')
    .description('list every --set key (sim run, sim serve, demo) with its meaning and its value in each preset')
    .option('--json', 'one JSON object per key')
    .action((options: { json?: boolean }) => {
      const knobs = describeKnobs();
      if (options.json === true) {
        for (const k of knobs) process.stdout.write(`${JSON.stringify(k)}\n`);
        return;
      }
      const presets = Object.keys(PRESETS);
      const head = ['key', ...presets, 'meaning'];
      const rows = knobs.map((k) => [
        k.key,
        ...presets.map((p) => k.values[p] ?? ''),
        `${k.help}${k.fault ? ' (fault)' : ''}`,
      ]);
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      const line = (cells: string[]): string =>
        cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
      process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n`);
      process.stdout.write(
        "\nDurations take ms, s or m (250ms, 5s, 2m); a (fault) key at a value other than the healthy preset's injects that fault.\n",
      );
    });
}
