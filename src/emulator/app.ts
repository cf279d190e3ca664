import { Hono } from 'hono';
import { createContext, type EmulatorContext, type EmulatorOptions } from './context.js';
import { agentRoutes } from './routes/agent.js';
import { assistantRoutes } from './routes/assistant.js';
import { bundleRoutes } from './routes/bundle.js';
import { controlRoutes } from './routes/control.js';
import { jobRoutes } from './routes/jobs.js';
import { modelRoutes } from './routes/model.js';

export interface Emulator {
  app: Hono;
  ctx: EmulatorContext;
  /** The keys this emulator accepts (random per instance unless given). */
  keys: { admin: string; assistant: string };
}

/**
 * The service stand-in as a hono app. Object storage (`/_objects/*`) is served
 * by `handleObject` on the raw node request instead, because it must control the socket (cut a
 * connection mid-body, throttle) and stream large files without buffering.
 */
export function createEmulator(o: EmulatorOptions): Emulator {
  const ctx = createContext(o);
  const app = new Hono();
  app.route('/v1/static-export/jobs', jobRoutes(ctx));
  app.route('/v1/static-export/jobs', bundleRoutes(ctx));
  app.route('/discovery/v2', assistantRoutes(ctx));
  app.route('/v2/agent', agentRoutes(ctx));
  app.route('/v1', modelRoutes()); // a stand-in of an in-network model (OpenAI-compatible), for the local assistant
  app.route('/_emulator', controlRoutes(ctx));
  app.notFound((c) => c.json({ error: `not found: ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => c.json({ error: `emulator error: ${err.message}` }, 500));
  return { app, ctx, keys: { admin: ctx.keys.admin[0]!, assistant: ctx.keys.assistant[0]! } };
}
