import { AirlockError } from '../errors.js';
import type { Command } from './main.js';

const command: Command = {
  summary: '(not built yet)',
  usage: 'usage: airlock prune (not built yet)',
  async run() {
    throw new AirlockError('AIRLOCK_NOT_BUILT', 'airlock prune is not built yet');
  },
};
export default command;
