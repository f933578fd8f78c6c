import { type Command } from 'commander';
export declare function registerHashCommand(program: Command): void;
