import { AirlockError } from '../errors.js';
import type { Command } from './main.js';

const command: Command = {
  summary: '(not built yet)',
  usage: 'usage: airlock rollback (not built yet)',
  async run() {
    throw new AirlockError('AIRLOCK_NOT_BUILT', 'airlock rollback is not built yet');
  },
};
export default command;
