// Times one ONNX model on ONNX Runtime's CPU provider (npm's onnxruntime-node):
// the yardstick of bench/ort_compare.py, never a dependency of ged.
//
//   node bench/ort_run.js MODEL [--shape NAME=D0,D1,...] [--input NAME=FILE.npy]
//        [--iterations N] [--warmup N] [--threads N] [--output-dir DIR]
//
// Inputs given with --shape are float32, uniform in [-1, 1) from a seeded
// generator; --input reads a .npy file (float32, float64, int32, int64, int8,
// uint8, bool, little-endian, C order), as `gectl bench --input` does. Prints one JSON line
// shaped like `gectl bench`'s: {"model", "iterations", "p50_ms", "p90_ms",
// "p99_ms", "mean_ms", "peak_rss_mb", "compile_ms"} where compile_ms is the
// session creation. An --input given several times for one name makes input
// sets (set k: the k-th file of each name, a name given fewer times keeping its
// last), run in turn as gectl bench does; the JSON line then adds "sets", the
// p50 / p90 of each. --output-dir saves the outputs of the last run as
// DIR/<output name>.npy (characters other than letters, digits, '.', '_' and
// '-' replaced by '_', as gectl does). NODE_PATH must reach the
// onnxruntime-node package (bench/ort_compare.py and bench/zoo/run.py set it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array], '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array],
};

// A .npy file (format 1.0 to 3.0) as an ort.Tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((d) => d.trim()).filter((d) => d).map(Number);
  const type = NPY_TYPES[descr];
  if (!type) throw new Error(`${file}: dtype ${descr} is not supported`);
  const [name, Ctor] = type;
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start, start + count * Ctor.BYTES_PER_ELEMENT);
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(bytes);
  return new ort.Tensor(name, name === 'bool' ? Uint8Array.from(data) : data, dims);
}

function writeNpy(file, tensor) {
  const descr = Object.keys(NPY_TYPES).find((k) => NPY_TYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`cannot save output of type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function parseArgs(argv) {
  const args = {model: null, shapes: {}, inputs: {}, inputSets: [{}], iterations: 100, warmup: 10, threads: 0, outputDir: null};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--shape') {
      const [name, dims] = next().split('=');
      args.shapes[name] = dims.split(',').map(Number);
    } else if (a === '--input') {
      const v = next();
      const eq = v.lastIndexOf('=');
      const name = v.slice(0, eq);
      let k = 0;
      while (k < args.inputSets.length && args.inputSets[k][name] !== undefined &&
             args.inputSets[k][name] !== v.slice(eq + 1)) ++k;
      if (k === args.inputSets.length) args.inputSets.push({});
      args.inputSets[k][name] = v.slice(eq + 1);
      if (k === 0) args.inputs[name] = v.slice(eq + 1);
    } else if (a === '--output-dir') {
      args.outputDir = next();
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

// VmHWM of /proc/self/status (as gectl bench reports it): unlike maxRSS of
// getrusage it starts afresh at exec, so a large parent that forked this
// process does not count.
function peakRssMb() {
  try {
    const m = /VmHWM:\s*(\d+)\s*kB/.exec(fs.readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) / 1024;
  } catch (e) {
    // no /proc: fall through
  }
  return process.resourceUsage().maxRSS / 1024;
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
  const createStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, options);
  const compileMs = Number(process.hrtime.bigint() - createStart) / 1e6;

  let state = 12345;  // xorshift32: the same inputs on every run
  const random = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state / 4294967296 * 2 - 1;
  };
  const feeds = {};
  for (const name of session.inputNames) {
    if (args.inputs[name]) {
      feeds[name] = readNpy(args.inputs[name]);
      continue;
    }
    const dims = args.shapes[name];
    if (!dims) throw new Error(`no --shape or --input for input '${name}'`);
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; ++i) data[i] = random();
    feeds[name] = new ort.Tensor('float32', data, dims);
  }

  // Input sets: set k takes the k-th file of each name, else the set before's.
  const sets = [feeds];
  for (let k = 1; k < args.inputSets.length; ++k) {
    const f = Object.assign({}, sets[k - 1]);
    for (const [name, file] of Object.entries(args.inputSets[k])) f[name] = readNpy(file);
    sets.push(f);
  }
  for (let i = 0; i < args.warmup; ++i) await session.run(sets[i % sets.length]);
  const times = [];
  const setTimes = sets.map(() => []);
  let results = null;
  for (let i = 0; i < args.iterations; ++i) {
    const start = process.hrtime.bigint();
    results = await session.run(sets[i % sets.length]);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    times.push(ms);
    setTimes[i % sets.length].push(ms);
  }
  if (args.outputDir) {
    fs.mkdirSync(args.outputDir, {recursive: true});
    for (const name of session.outputNames) {
      writeNpy(path.join(args.outputDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.npy`), results[name]);
    }
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const extra = {};
  if (sets.length > 1) {
    extra.sets = setTimes.map((t) => {
      t.sort((a, b) => a - b);
      return t.length ? {runs: t.length, p50_ms: percentile(t, 0.5), p90_ms: percentile(t, 0.9)} : {runs: 0};
    });
  }
  console.log(JSON.stringify({
    model: args.model,
    iterations: args.iterations,
    p50_ms: percentile(times, 0.5),
    p90_ms: percentile(times, 0.9),
    p99_ms: percentile(times, 0.99),
    mean_ms: mean,
    peak_rss_mb: peakRssMb(),
    compile_ms: compileMs,
    ...extra,
  }));
}

main().catch((e) => {
  console.error(`ort_run.js: ${e.message}`);
  process.exit(1);
});
