#!/usr/bin/env node
import { endQuietlyOnClosedPipe } from './closed-pipe.js';
import { runCli } from './program.js';

// a closed pipe ends the process at once: a long-running command (tail, demo) would otherwise go on writing to nobody
endQuietlyOnClosedPipe((code) => process.exit(code));
process.exitCode = await runCli(process.argv);
