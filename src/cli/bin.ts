#!/usr/bin/env node
import { EXIT } from '../errors.js';
import { redact } from '../util/redact.js';
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(redact(String(err)) + '\n');
    process.exitCode = EXIT.FAILURE;
  },
);
