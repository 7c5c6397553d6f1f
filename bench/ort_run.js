// Times one ONNX model on ONNX Runtime's CPU provider (npm's onnxruntime-node):
// the yardstick of bench/ort_compare.py, never a dependency of ged.
//
//   node bench/ort_run.js MODEL --shape NAME=D0,D1,... [--shape ...]
//        [--iterations N] [--warmup N] [--threads N]
//
// Inputs are float32, uniform in [-1, 1) from a seeded generator. Prints one
// JSON line shaped like `gectl bench`'s: {"model", "iterations", "p50_ms",
// "p90_ms", "p99_ms", "mean_ms", "peak_rss_mb"}. NODE_PATH must reach the
// onnxruntime-node package (bench/ort_compare.py sets it).
'use strict';
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const args = {model: null, shapes: {}, iterations: 100, warmup: 10, threads: 0};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--shape') {
      const [name, dims] = next().split('=');
      args.shapes[name] = dims.split(',').map(Number);
    } else if (a === '--iterations') {
      args.iterations = Number(next());
    } else if (a === '--warmup') {
      args.warmup = Number(next());
    } else if (a === '--threads') {
      args.threads = Number(next());
    } else if (args.model === null) {
      args.model = a;
    } else {
      throw new Error(`unexpected argument '${a}'`);
    }
  }
  if (args.model === null) throw new Error('usage: ort_run.js MODEL --shape NAME=DIMS ...');
  return args;
}

// Linear interpolation between the sorted samples, as gectl bench does.
function percentile(sorted, p) {
  const pos = (sorted.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    interOpNumThreads: 1,
  };
  if (args.threads > 0) options.intraOpNumThreads = args.threads;
  const session = await ort.InferenceSession.create(args.model, options);

  let state = 12345;  // xorshift32: the same inputs on every run
  const random = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state / 4294967296 * 2 - 1;
  };
  const feeds = {};
  for (const name of session.inputNames) {
    const dims = args.shapes[name];
    if (!dims) throw new Error(`no --shape for input '${name}'`);
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; ++i) data[i] = random();
    feeds[name] = new ort.Tensor('float32', data, dims);
  }

  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(JSON.stringify({
    model: args.model,
    iterations: args.iterations,
    p50_ms: percentile(times, 0.5),
    p90_ms: percentile(times, 0.9),
    p99_ms: percentile(times, 0.99),
    mean_ms: mean,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  }));
}

main().catch((e) => {
  console.error(`ort_run.js: ${e.message}`);
  process.exit(1);
});
