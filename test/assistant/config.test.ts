import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelConfig } from '../../src/assistant/config.js';

/** local-assistant's model from the flags and the environment, as `serve` checks it at start. */
const flags = (url: string) => ({ url, name: 'm', enable: [], disable: [] });

describe('the model configuration', () => {
  it('refuses a model URL with port 0 (no model server listens there), naming the flag', async () => {
    for (const url of ['http://127.0.0.1:0/v1', 'http://vllm.models.svc:00/v1'])
      await expect(modelConfig(flags(url), true, {})).rejects.toThrow(/^--assistant-model: ".*" has port 0/);
    await expect(modelConfig(flags('http://127.0.0.1:8000/v1'), true, {})).resolves.toMatchObject({ url: 'http://127.0.0.1:8000/v1' });
  });

  it('a key a header cannot carry is refused naming where it came from: the variable, or the file the _FILE variable names', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-model-key-'));
    try {
      const file = join(dir, 'key');
      await writeFile(file, 'two\nlines\n');
      await expect(modelConfig(flags('http://127.0.0.1:8000/v1'), true, { AIRLOCK_ASSISTANT_MODEL_KEY_FILE: file })).rejects.toThrow(
        'the file AIRLOCK_ASSISTANT_MODEL_KEY_FILE names holds a space or a character a header cannot carry',
      );
      await expect(modelConfig(flags('http://127.0.0.1:8000/v1'), true, { AIRLOCK_ASSISTANT_MODEL_KEY: 'a b' })).rejects.toThrow(
        /^AIRLOCK_ASSISTANT_MODEL_KEY holds a space/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
