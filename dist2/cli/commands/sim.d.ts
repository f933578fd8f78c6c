import type { Command } from 'commander';
export declare function registerSimCommand(program: Command): void;
