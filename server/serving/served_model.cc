// One loaded model version: loading, request checks, runs and statistics
// (served_model.h).
#include "server/serving/served_model.h"

#include <filesystem>
#include <set>

#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"
#include "server/serving/model_config.h"

namespace ge::server::serving {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) StrAppend(&out, i ? "," : "", dims[i]);
  return out + "]";
}

std::vector<ModelTensor> ToModelTensors(const std::vector<session::GraphIo>& ios) {
  std::vector<ModelTensor> out;
  for (const session::GraphIo& io : ios) {
    ModelTensor t;
    t.name = io.name;
    t.dtype = io.type.dtype();
    t.unknown_rank = io.type.shape().unknown_rank();
    if (!t.unknown_rank) t.shape.assign(io.type.shape().dims().begin(), io.type.shape().dims().end());
    out.push_back(std::move(t));
  }
  return out;
}

// `dims` with its one -1 (if any) resolved so that it holds `elements`.
absl::StatusOr<Shape> Resolve(int64_t rows, bool batched, const google::protobuf::RepeatedField<int64_t>& dims,
                              int64_t elements, const std::string& what) {
  std::vector<int64_t> shape;
  if (batched) shape.push_back(rows);
  int64_t known = batched ? rows : 1;
  int unknown = -1;
  for (int64_t d : dims) {
    if (d < 0) {
      if (unknown >= 0) return InvalidArgument(what, ": a reshape may leave one dim -1, not more");
      unknown = static_cast<int>(shape.size());
      shape.push_back(1);
    } else {
      shape.push_back(d);
      known *= d;
    }
  }
  if (unknown >= 0) {
    if (known == 0 || elements % known != 0) return InvalidArgument(what, ": ", elements, " elements do not reshape");
    shape[unknown] = elements / known;
  } else if (known != elements) {
    return InvalidArgument(what, ": ", elements, " elements do not reshape to ", ShapeText(shape));
  }
  return Shape(absl::Span<const int64_t>(shape));
}

int64_t TensorBytes(const Tensor& t) {
  if (t.dtype() != DataType::kString) return static_cast<int64_t>(t.SizeInBytes());
  int64_t bytes = 0;
  for (int64_t i = 0; i < t.NumElements(); ++i) bytes += static_cast<int64_t>(t.data<std::string>()[i].size()) + 4;
  return bytes;
}

}  // namespace

absl::StatusOr<std::shared_ptr<ServedModel>> ServedModel::Load(const session::Runtime& runtime,
                                                               inference::ModelConfig config,
                                                               const std::string& version_dir, int64_t version,
                                                               const LoadSettings& settings) {
  std::shared_ptr<ServedModel> m(new ServedModel());
  m->version_ = version;
  m->label_ = StrCat("model ", config.name(), " version ", version);
  m->observer_ = settings.observer;
  namespace fs = std::filesystem;
  fs::path file = fs::path(version_dir) /
                  (config.default_model_filename().empty() ? "model.onnx" : config.default_model_filename());
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "model.onnx";  // a directory holding the model and its external data
  if (!fs::is_regular_file(file, ec)) return NotFound(m->label_, ": no model file ", file.string());
  session::IngestOptions ingest;
  ingest.provenance = session::Provenance::kOperator;
  ingest.weights_root = file.parent_path().string();
  ingest.label = m->label_;
  auto import = [&]() -> absl::StatusOr<std::unique_ptr<ir::Graph>> {
    GE_ASSIGN_OR_RETURN(session::IngestedModel in,
                        runtime.AddModel(session::ModelSource::OnnxPath(file.string()), ingest));
    if (in.graph == nullptr) return InvalidArgument(m->label_, ": ", file.string(), " is not an ONNX model");
    return std::move(in.graph);
  };
  m->session_ = runtime.NewSession({}, settings.device, runtime.OperatorScope(), settings.memory);
  m->session_->set_memory_quota(settings.memory, settings.max_tensor_bytes);
  // The model's inputs, before the options that depend on them.
  constexpr uint32_t kProbe = 1u << 20;
  GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> probe_graph, import());
  GE_RETURN_IF_ERROR(m->session_->AddGraph(kProbe, std::move(probe_graph)));
  GE_ASSIGN_OR_RETURN(session::GraphInfo probe, m->session_->GetGraphInfo(kProbe));
  GE_RETURN_IF_ERROR(m->session_->RemoveGraph(kProbe));
  const std::vector<ModelTensor> model_inputs = ToModelTensors(probe.inputs);
  GE_RETURN_IF_ERROR(Annotate(CompleteInputs(config, model_inputs), m->label_));
  // Batching models are compiled with a gear per batch size when their
  // other dims are known; otherwise they run on the dynamic executor.
  std::vector<int64_t> gears = BatchGears(config);
  for (const ModelTensor& t : model_inputs) {
    if (t.unknown_rank) gears.clear();
    for (size_t d = 1; d < t.shape.size(); ++d) {
      if (t.shape[d] < 0) gears.clear();
    }
  }
  OptionMap options;
  if (!gears.empty()) {
    std::string list;
    for (int64_t g : gears) StrAppend(&list, list.empty() ? "" : ",", g);
    options["ge.dynamicBatchSize"] = list;
  }
  int instances = 0;
  for (const auto& group : config.instance_group()) instances += group.count() == 0 ? 1 : group.count();
  if (instances == 0) instances = 1;
  for (int i = 0; i < instances; ++i) {
    GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, import());
    GE_RETURN_IF_ERROR(Annotate(m->session_->AddGraph(i + 1, std::move(graph), options), m->label_));
    GE_RETURN_IF_ERROR(Annotate(
        m->session_->CompileGraph(i + 1, settings.compile_timeout_seconds, "compile_timeout_seconds"), m->label_));
  }
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, m->session_->GetGraphInfo(1));
  std::vector<ModelTensor> model_outputs = ToModelTensors(info.outputs);
  if (config.max_batch_size() > 0) {
    // A gear model's root shows its largest gear: rows are the batch's.
    for (ModelTensor& t : model_outputs) {
      if (!t.unknown_rank && !t.shape.empty()) t.shape[0] = -1;
    }
  }
  GE_RETURN_IF_ERROR(Annotate(CompleteOutputs(config, model_outputs), m->label_));
  for (const auto& in : config.input()) {
    for (size_t i = 0; i < info.inputs.size(); ++i) {
      if (info.inputs[i].name == in.name()) m->input_order_.push_back(static_cast<int>(i));
    }
  }
  for (const auto& out : config.output()) {
    for (size_t i = 0; i < info.outputs.size(); ++i) {
      if (info.outputs[i].name == out.name()) m->output_order_.push_back(static_cast<int>(i));
    }
  }
  if (m->input_order_.size() != info.inputs.size() || m->output_order_.size() != info.outputs.size()) {
    return Internal(m->label_, ": the config's inputs and outputs do not match the compiled graph's");
  }
  m->config_ = std::move(config);
  BatcherOptions b;
  b.name = m->label_;
  b.max_batch_size = m->config_.max_batch_size();
  b.batching = m->config_.has_dynamic_batching() && b.max_batch_size > 0;
  const auto& db = m->config_.dynamic_batching();
  b.preferred.assign(db.preferred_batch_size().begin(), db.preferred_batch_size().end());
  b.gears = gears;
  b.max_queue_delay = std::chrono::microseconds(db.max_queue_delay_microseconds());
  b.max_queue_size = db.default_queue_policy().max_queue_size() > 0 ? db.default_queue_policy().max_queue_size()
                                                                    : settings.default_max_queue_size;
  b.instances = instances;
  ServedModel* raw = m.get();
  BatchObserver observer;
  observer.batch = [raw](int64_t rows, int64_t, int64_t ns, bool ok) {
    if (ok) {
      std::lock_guard<std::mutex> lock(raw->stats_mu_);
      raw->stats_.execution_count += 1;
      raw->stats_.inference_count += rows;
      raw->stats_.compute_infer.count += 1;
      raw->stats_.compute_infer.ns += ns;
      raw->stats_.batches[rows].count += 1;
      raw->stats_.batches[rows].ns += ns;
    }
    if (raw->observer_.batch) raw->observer_.batch(raw->name(), rows);
  };
  observer.dequeued = [raw](int64_t ns) {
    {
      std::lock_guard<std::mutex> lock(raw->stats_mu_);
      raw->stats_.queue.count += 1;
      raw->stats_.queue.ns += ns;
    }
    if (raw->observer_.queue) raw->observer_.queue(raw->name(), ns * 1e-9);
  };
  m->batcher_ = std::make_unique<Batcher>(
      b, [raw](int instance, std::vector<Tensor> inputs) { return raw->Run(instance, std::move(inputs)); },
      std::move(observer));
  Logger("server").info("{} loaded: {} instance(s), max_batch_size {}{}{}", m->label_, instances, b.max_batch_size,
                        b.batching ? ", dynamic batching" : "",
                        gears.empty() ? "" : StrCat(", gears ", options["ge.dynamicBatchSize"]));
  return m;
}

ServedModel::~ServedModel() {
  if (batcher_ != nullptr) batcher_->Stop();
}

ModelStats ServedModel::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

absl::StatusOr<std::vector<Tensor>> ServedModel::Run(int instance, std::vector<Tensor> inputs) {
  std::vector<Value> values;
  values.reserve(inputs.size());
  for (Tensor& t : inputs) values.emplace_back(std::move(t));
  GE_ASSIGN_OR_RETURN(std::vector<Value> results,
                      session_->RunGraph(static_cast<uint32_t>(instance + 1), std::move(values)));
  std::vector<Tensor> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].is_tensor()) return Internal(label_, ": output ", i, " is not a tensor");
    out.push_back(results[i].tensor());
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> ServedModel::CheckInputs(const InferRequest& request, int64_t* rows) const {
  const int count = config_.input_size();
  std::vector<const Tensor*> given(count, nullptr);
  std::string names;
  for (const auto& in : config_.input()) StrAppend(&names, names.empty() ? "" : ", ", in.name());
  for (const NamedTensor& t : request.inputs) {
    int index = -1;
    for (int i = 0; i < count; ++i) {
      if (config_.input(i).name() == t.name) index = i;
    }
    if (index < 0) return InvalidArgument(label_, ": unknown input '", t.name, "' (the model's inputs: ", names, ")");
    if (given[index] != nullptr) return InvalidArgument(label_, ": input '", t.name, "' is given twice");
    given[index] = &t.tensor;
  }
  const bool batched = config_.max_batch_size() > 0;
  *rows = batched ? -1 : 1;
  std::vector<Tensor> out(count);
  for (int i = 0; i < count; ++i) {
    const inference::ModelInput& in = config_.input(i);
    if (given[i] == nullptr) return InvalidArgument(label_, ": input '", in.name(), "' is missing");
    const Tensor& t = *given[i];
    const std::optional<DataType> want = FromConfigType(in.data_type());
    if (!want || t.dtype() != *want) {
      return InvalidArgument(label_, ": input '", in.name(), "' has datatype ", KServeDatatype(t.dtype()),
                             ", the model takes ", want ? KServeDatatype(*want) : "INVALID");
    }
    std::vector<int64_t> shape(t.shape().dims().begin(), t.shape().dims().end());
    std::vector<int64_t> expect;
    if (batched) expect.push_back(-1);
    expect.insert(expect.end(), in.dims().begin(), in.dims().end());
    bool fits = shape.size() == expect.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) fits = expect[d] < 0 || expect[d] == shape[d];
    if (!fits) {
      return InvalidArgument(label_, ": input '", in.name(), "' has shape ", ShapeText(shape), ", the model takes ",
                             ShapeText(expect), batched ? " (dim 0: the batch)" : "");
    }
    if (batched) {
      if (shape[0] < 1) return InvalidArgument(label_, ": input '", in.name(), "' has a batch of ", shape[0], " rows");
      if (shape[0] > config_.max_batch_size()) {
        return InvalidArgument(label_, ": input '", in.name(), "' has a batch of ", shape[0],
                               " rows, above max_batch_size ", config_.max_batch_size());
      }
      if (*rows >= 0 && shape[0] != *rows) {
        return InvalidArgument(label_, ": input '", in.name(), "' has ", shape[0], " rows, another input ", *rows);
      }
      *rows = shape[0];
    }
    Tensor value = t;
    if (in.has_reshape()) {
      GE_ASSIGN_OR_RETURN(Shape reshaped, Resolve(*rows, batched, in.reshape().shape(), t.NumElements(),
                                                  StrCat(label_, ": input '", in.name(), "'")));
      value = t.Reshaped(reshaped);
    }
    out[input_order_[i]] = std::move(value);
  }
  return out;
}

void ServedModel::Record(bool ok, int64_t total_ns) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  ModelStats::Duration& d = ok ? stats_.success : stats_.fail;
  d.count += 1;
  d.ns += total_ns;
  if (ok) {
    stats_.last_inference_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  }
}

void ServedModel::Infer(InferRequest request, InferDone done) {
  const int64_t start = NowNs();
  const std::string version = std::to_string(version_);
  auto fail = [this, start, &done, &version](const absl::Status& status) {
    Record(false, NowNs() - start);
    if (observer_.request) observer_.request(name(), version, status.code());
    done(status);
  };
  int64_t rows = 1;
  absl::StatusOr<std::vector<Tensor>> inputs = CheckInputs(request, &rows);
  if (!inputs.ok()) return fail(inputs.status());
  std::vector<int> wanted;  // config output indices
  for (const std::string& name : request.outputs) {
    int index = -1;
    for (int j = 0; j < config_.output_size(); ++j) {
      if (config_.output(j).name() == name) index = j;
    }
    if (index < 0) return fail(InvalidArgument(label_, ": unknown output '", name, "' requested"));
    wanted.push_back(index);
  }
  if (wanted.empty()) {
    for (int j = 0; j < config_.output_size(); ++j) wanted.push_back(j);
  }
  // The request's bytes count against its tenant while it is in flight:
  // its inputs, and its outputs where their size is known.
  int64_t bytes = 0;
  for (const NamedTensor& t : request.inputs) bytes += TensorBytes(t.tensor);
  for (const auto& out : config_.output()) {
    int64_t n = config_.max_batch_size() > 0 ? rows : 1;
    for (int64_t d : out.dims()) n = d < 0 ? 0 : n * d;
    const std::optional<DataType> dtype = FromConfigType(out.data_type());
    if (dtype && *dtype != DataType::kString) bytes += n * static_cast<int64_t>(DataTypeSize(*dtype));
  }
  std::shared_ptr<device::MemoryQuota> memory = request.memory;
  if (memory != nullptr) {
    if (absl::Status s = memory->Reserve(bytes); !s.ok()) return fail(Annotate(s, label_));
  }
  auto br = std::make_unique<BatchRequest>();
  br->inputs = *std::move(inputs);
  br->rows = rows;
  br->deadline = request.deadline;
  br->cancelled = request.cancelled;
  br->done = [this, start, rows, wanted, memory, bytes, version, id = request.id,
              done](absl::StatusOr<std::vector<Tensor>> outputs) {
    if (memory != nullptr) memory->Release(bytes);
    absl::StatusOr<InferResult> result = absl::UnknownError("no result");
    if (outputs.ok()) {
      InferResult r;
      r.model = name();
      r.version = version;
      r.id = id;
      absl::Status error;
      for (int j : wanted) {
        const inference::ModelOutput& out = config_.output(j);
        Tensor t = (*outputs)[output_order_[j]];
        if (out.has_reshape()) {
          absl::StatusOr<Shape> shape = Resolve(rows, config_.max_batch_size() > 0, out.dims(), t.NumElements(),
                                                StrCat(label_, ": output '", out.name(), "'"));
          if (!shape.ok()) {
            error = shape.status();
            break;
          }
          t = t.Reshaped(*shape);
        }
        r.outputs.push_back({out.name(), std::move(t)});
      }
      if (error.ok()) {
        result = std::move(r);
      } else {
        result = error;
      }
    } else {
      result = Annotate(outputs.status(), label_);
    }
    Record(result.ok(), NowNs() - start);
    if (observer_.request) observer_.request(name(), version, result.status().code());
    done(std::move(result));
  };
  if (absl::Status s = batcher_->Submit(std::move(br)); !s.ok()) {
    if (memory != nullptr) memory->Release(bytes);
    fail(s);
  }
}

}  // namespace ge::server::serving
