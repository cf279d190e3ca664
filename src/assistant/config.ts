import { UsageError } from '../errors.js';
import { readEnvSecret } from '../upstream/keys.js';
import type { ModelOptions } from './model.js';

/**
 * The organisation's model for local-assistant, checked at start-up (before the server listens):
 * `--assistant-model URL` (an OpenAI-compatible API's base URL, http(s), no credentials, query or
 * fragment) with `--assistant-model-name NAME`, the key from AIRLOCK_ASSISTANT_MODEL_KEY or
 * AIRLOCK_ASSISTANT_MODEL_KEY_FILE (never a flag: `ps` would show it; many in-network servers need
 * none). A model given turns local-assistant on unless `--disable local-assistant`; local-assistant
 * enabled without a model is a usage error (exit 2): it would answer nothing.
 */
export interface ModelFlags {
  url?: string;
  name?: string;
  enable: readonly string[];
  disable: readonly string[];
}

const names = (list: readonly string[]) => list.flatMap((s) => s.split(',')).map((s) => s.trim());
const isLocalAssistant = (n: string) => n === 'local-assistant' || n === 'localAssistant';

/** The `--enable` list with local-assistant added when a model is configured (and not disabled). */
export function enableWithModel(f: ModelFlags): string[] {
  const on = f.url !== undefined && !names(f.disable).some(isLocalAssistant);
  return on && !names(f.enable).some(isLocalAssistant) ? [...f.enable, 'local-assistant'] : [...f.enable];
}

/** A URL as it may be printed: credentials, query and fragment (a token may be there) left out. */
const shown = (u: URL) =>
  `${u.protocol}//${u.host}${u.pathname}${u.username || u.password ? ' (with credentials)' : ''}${u.search || u.hash ? ' (with a query or fragment)' : ''}`;

export async function modelConfig(f: ModelFlags, localAssistant: boolean, env: NodeJS.ProcessEnv, serviceAssistant = false): Promise<ModelOptions | null> {
  if ((f.url === undefined) !== (f.name === undefined))
    throw new UsageError('--assistant-model and --assistant-model-name go together: the model server, and the model it should run', {
      subject: f.url === undefined ? '--assistant-model' : '--assistant-model-name',
    });
  if (!localAssistant) return null;
  if (serviceAssistant)
    throw new UsageError(
      "the service's assistant is on (relayed) and so is local-assistant: both would answer the same endpoint; --disable assistant or --disable local-assistant",
      { subject: '--disable' },
    );
  if (f.url === undefined || f.name === undefined)
    throw new UsageError(
      'local-assistant answers with a model your network runs: give it with --assistant-model URL --assistant-model-name NAME (an OpenAI-compatible API, such as vLLM, llama.cpp, Ollama or TGI)',
      { subject: '--enable' },
    );
  let url: URL;
  try {
    url = new URL(f.url);
  } catch {
    throw new UsageError(`--assistant-model: ${JSON.stringify(f.url)} is not a URL`, { subject: '--assistant-model' });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash)
    throw new UsageError(`--assistant-model: ${JSON.stringify(shown(url))} must be an http(s) base URL without credentials, query or fragment`, {
      subject: '--assistant-model',
    });
  if (url.port === '0')
    throw new UsageError(`--assistant-model: ${JSON.stringify(shown(url))} has port 0, which no model server listens on`, { subject: '--assistant-model' });
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (f.name.trim() === '' || f.name.length > 200 || /[\u0000-\u001f\u007f]/.test(f.name))
    throw new UsageError('--assistant-model-name: give the name the model server knows the model by (at most 200 characters, no control characters)', {
      subject: '--assistant-model-name',
    });
  const key = (await readEnvSecret(env, 'AIRLOCK_ASSISTANT_MODEL_KEY')) ?? null;
  if (key !== null && !/^[\x21-\x7e]+$/.test(key)) {
    const from = env.AIRLOCK_ASSISTANT_MODEL_KEY?.trim() ? 'AIRLOCK_ASSISTANT_MODEL_KEY' : `the file AIRLOCK_ASSISTANT_MODEL_KEY_FILE names`;
    throw new UsageError(`${from} holds a space or a character a header cannot carry`, { subject: 'AIRLOCK_ASSISTANT_MODEL_KEY' });
  }
  return { url: url.href.replace(/\/+$/, ''), name: f.name, key };
}
