/**
 * The compression worker, as source text run with `new Worker(code, { eval: true })`: a worker
 * needs a file the runtime can load by itself, and a .ts file is not one under vitest/tsx (Node 20
 * workers do not inherit the TS loader). It uses only node built-ins, so plain JS is enough.
 *
 * One job: compress `src` with brotli and gzip; write each variant only if it is smaller, as
 * temp file + fsync + rename (the builder fsyncs the folder once before publishing the index).
 */
export interface VariantJob { id: number; src: string; destBase: string; brQuality: number; gzipLevel: number }
export interface VariantResult { id: number; br?: number; gz?: number; error?: string }

export const WORKER_SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs/promises');
const zlib = require('node:zlib');
const crypto = require('node:crypto');

async function writeDurable(path, data) {
  const tmp = path + '.' + process.pid + '.' + crypto.randomBytes(4).toString('hex') + '.tmp';
  const fh = await fs.open(tmp, 'wx');
  try { await fh.writeFile(data); await fh.sync(); } finally { await fh.close(); }
  try { await fs.rename(tmp, path); } catch (err) { await fs.rm(tmp, { force: true }); throw err; }
}

async function run(job) {
  const data = await fs.readFile(job.src);
  const out = { id: job.id };
  const C = zlib.constants;
  const br = zlib.brotliCompressSync(data, { params: {
    [C.BROTLI_PARAM_QUALITY]: job.brQuality, [C.BROTLI_PARAM_SIZE_HINT]: data.length, [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT } });
  if (br.length < data.length) { await writeDurable(job.destBase + '.br', br); out.br = br.length; }
  const gz = zlib.gzipSync(data, { level: job.gzipLevel });
  if (gz.length < data.length) { await writeDurable(job.destBase + '.gz', gz); out.gz = gz.length; }
  return out;
}

parentPort.on('message', (job) => {
  run(job).then((r) => parentPort.postMessage(r), (err) => parentPort.postMessage({ id: job.id, error: String(err && err.message || err) }));
});
`;
