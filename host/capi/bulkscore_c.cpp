// The C ABI (include/bulkscore/bulkscore.h): a thin layer over Engine.
// Every entry point catches everything: a C++ exception never crosses it.
#include "bulkscore/bulkscore.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"
#include "host/engine/result_json.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"

struct bs_executor {
  std::shared_ptr<bulkscore::Executor> executor;
};

struct bs_engine {
  std::unique_ptr<bulkscore::Engine> engine;
  std::vector<std::string> warnings;
  std::string backend_note;
};

namespace {

using bulkscore::EventCode;
using bulkscore::EventStatus;

thread_local std::string g_last_error;

int fail(int status, std::string message) {
  g_last_error = std::move(message);
  return status;
}

// Runs `body`, mapping every exception to a status and this thread's message.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const bulkscore::InputError& e) {
    return fail(BS_INVALID_INPUT, e.what());
  } catch (const bulkscore::BackendUnavailable& e) {
    return fail(BS_BACKEND_UNAVAILABLE, e.what());
  } catch (const bulkscore::CudaError& e) {
    return fail(BS_DEVICE_ERROR, e.what());
  } catch (const std::bad_alloc&) {
    return fail(BS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(BS_INTERNAL, e.what());
  } catch (...) {
    return fail(BS_INTERNAL, "unknown exception");
  }
}

int status_of(const EventStatus& s, bs_engine* h) {
  for (const std::string& w : s.warnings) h->warnings.push_back(w);
  switch (s.code) {
    case EventCode::kOk:
      return BS_OK;
    case EventCode::kAlreadyExists:
      return fail(BS_ALREADY_EXISTS, s.message);
    case EventCode::kNotFound:
      return fail(BS_NOT_FOUND, s.message);
    case EventCode::kWrongState:
      return fail(BS_WRONG_STATE, s.message);
    case EventCode::kInvalid:
      return fail(BS_INVALID_INPUT, s.message);
  }
  return fail(BS_INTERNAL, "unknown event status");
}

#define BS_REQUIRE(cond, what) \
  if (!(cond)) return fail(BS_INVALID_ARGUMENT, what)

std::string text_of(const char* p, size_t n) { return p ? std::string(p, n) : std::string(); }

bulkscore::Pod one_pod(const char* json, size_t len) {
  return bulkscore::parse_pod_object_json(text_of(json, len), "pod");
}

bulkscore::Node one_node(const char* json, size_t len) {
  return bulkscore::parse_node_object_json(text_of(json, len), "node");
}

// The public struct and a pointer back to what owns its strings: standard
// layout, so the struct's address is the box's and freeing finds the owner.
template <class Pub>
struct Box {
  Pub pub{};
  void* owner = nullptr;
};

// Strings the C structs point into, kept with them.
struct ScheduleHolder {
  Box<bs_schedule_result> box;
  bulkscore::ScheduleResult r;
  std::string code_name, json;
  std::vector<const char*> warnings;
  std::vector<const char*> victims;
};

struct RankingHolder {
  Box<bs_ranking> box;
  bulkscore::Ranking r;
  std::vector<const char*> plugins;
  std::vector<bs_ranked_node> nodes;
  std::vector<bs_rejection> rejections;
  std::string json;
};

// bs_engine_schedule_all's: the list and the results it points to.
struct ScheduleResultsHolder {
  Box<bs_schedule_results> box;
  std::vector<std::unique_ptr<ScheduleHolder>> results;
  std::vector<const bs_schedule_result*> pointers;
};

std::unique_ptr<ScheduleHolder> schedule_holder(bulkscore::ScheduleResult r) {
  auto h = std::make_unique<ScheduleHolder>();
  h->r = std::move(r);
  const bulkscore::ScheduleResult& s = h->r;
  h->code_name = s.node >= 0 ? "Success" : bulkscore::code_name(s.code);
  bulkscore::append_schedule_result_json(s, h->json);
  for (const std::string& w : s.warnings) h->warnings.push_back(w.c_str());
  for (const std::string& v : s.victims) h->victims.push_back(v.c_str());
  bs_schedule_result& p = h->box.pub;
  p.pod = s.pod.c_str();
  p.node = s.node >= 0 ? s.node_name.c_str() : "";
  p.score = s.score;
  p.feasible_nodes = s.feasible_nodes;
  p.code = s.node >= 0 ? 0 : static_cast<int>(s.code);
  p.code_name = h->code_name.c_str();
  p.message = s.message.c_str();
  p.devices = s.devices.data();
  p.num_devices = s.devices.size();
  p.device_group = s.device_group.c_str();
  p.warnings = h->warnings.data();
  p.num_warnings = h->warnings.size();
  p.json = h->json.c_str();
  p.nominated_node = s.nominated_node.c_str();
  p.victims = h->victims.data();
  p.num_victims = h->victims.size();
  p.pdb_violations = s.pdb_violations;
  p.pod_group = s.pod_group.c_str();
  p.group_outcome = bulkscore::group_outcome_name(s.group_outcome);
  p.group_domain = s.group_domain.c_str();
  h->box.owner = h.get();
  return h;
}

int make_schedule_result(bulkscore::ScheduleResult r, bs_schedule_result** out) {
  *out = &schedule_holder(std::move(r)).release()->box.pub;
  return BS_OK;
}

}  // namespace

namespace {

// One object of the kinds the engine holds, from its JSON.
template <class Apply>
int with_one_object(bs_engine* engine, const char* json, size_t len, Apply&& apply) {
  bulkscore::ClusterObjects o = bulkscore::parse_objects_json(text_of(json, len), "object");
  // A Workload is read as one entry per spec.podGroups[] item: the entries
  // of one API, namespace and name are one object.
  size_t pod_group_objects = 0;
  for (size_t i = 0; i < o.pod_groups.size(); ++i) {
    const bulkscore::PodGroupObject& g = o.pod_groups[i];
    const bool continues = i > 0 && o.pod_groups[i - 1].api == g.api &&
                           o.pod_groups[i - 1].namespace_name == g.namespace_name && o.pod_groups[i - 1].name == g.name;
    pod_group_objects += continues ? 0 : 1;
  }
  const size_t n = o.namespaces.size() + o.selecting.size() + o.device_groups.size() + o.priority_classes.size() +
                   o.pdbs.size() + pod_group_objects;
  if (n != 1)
    throw bulkscore::InputError(
        "object: expected one Service, ReplicationController, ReplicaSet, StatefulSet, Namespace, SharedDeviceGroup, "
        "PriorityClass, PodDisruptionBudget, Workload or PodGroup, got " +
        std::to_string(n) + " of those kinds");
  if (!o.pod_groups.empty()) return status_of(apply(o.pod_groups), engine);
  if (!o.namespaces.empty()) return status_of(apply(o.namespaces.front()), engine);
  if (!o.selecting.empty()) return status_of(apply(o.selecting.front()), engine);
  if (!o.priority_classes.empty()) return status_of(apply(o.priority_classes.front()), engine);
  if (!o.pdbs.empty()) return status_of(apply(o.pdbs.front()), engine);
  return status_of(apply(o.device_groups.front()), engine);
}

}  // namespace

extern "C" {

const char* bs_last_error(void) { return g_last_error.c_str(); }

const char* bs_status_name(int status) {
  switch (status) {
    case BS_OK:
      return "BS_OK";
    case BS_INVALID_INPUT:
      return "BS_INVALID_INPUT";
    case BS_ALREADY_EXISTS:
      return "BS_ALREADY_EXISTS";
    case BS_NOT_FOUND:
      return "BS_NOT_FOUND";
    case BS_WRONG_STATE:
      return "BS_WRONG_STATE";
    case BS_BACKEND_UNAVAILABLE:
      return "BS_BACKEND_UNAVAILABLE";
    case BS_DEVICE_ERROR:
      return "BS_DEVICE_ERROR";
    case BS_OUT_OF_MEMORY:
      return "BS_OUT_OF_MEMORY";
    case BS_INVALID_ARGUMENT:
      return "BS_INVALID_ARGUMENT";
    case BS_INTERNAL:
      return "BS_INTERNAL";
    default:
      return "BS_UNKNOWN";
  }
}

const char* bs_version(void) { return BULKSCORE_VERSION; }
int bs_abi_version(void) { return BULKSCORE_ABI_VERSION; }
void bs_free(void* p) { std::free(p); }

void bs_engine_options_init(bs_engine_options* o) {
  if (!o) return;
  *o = bs_engine_options{};
  o->backend = "auto";
  o->tie_break = BS_TIE_BREAK_RANDOM;
  o->batching = BS_BATCHING_EXACT;
  o->batch_states = 1;
}

int bs_engine_create(const char* config_yaml, size_t config_len, const bs_engine_options* options,
                     bs_engine** out) {
  BS_REQUIRE(out, "bs_engine_create: out is NULL");
  *out = nullptr;
  return guarded([&] {
    bs_engine_options o;
    bs_engine_options_init(&o);
    if (options) o = *options;
    BS_REQUIRE(o.tie_break == BS_TIE_BREAK_RANDOM || o.tie_break == BS_TIE_BREAK_FIRST,
               "bs_engine_create: tie_break is not a bs_tie_break");
    BS_REQUIRE(o.batching >= BS_BATCHING_EXACT && o.batching <= BS_BATCHING_OFF,
               "bs_engine_create: batching is not a bs_batching");
    BS_REQUIRE(o.batch_states >= 1, "bs_engine_create: batch_states must be at least 1");
    BS_REQUIRE(o.threads >= 0, "bs_engine_create: threads must not be negative");
    BS_REQUIRE(o.assumed_pod_ttl_seconds >= 0, "bs_engine_create: assumed_pod_ttl_seconds must not be negative");
    bulkscore::SchedulerConfig config = config_yaml && config_len
                                            ? bulkscore::parse_scheduler_config(text_of(config_yaml, config_len),
                                                                                "config")
                                            : bulkscore::default_scheduler_config();
    bulkscore::EngineOptions eo;
    eo.backend = o.backend ? o.backend : "auto";
    eo.tie_break = o.tie_break == BS_TIE_BREAK_FIRST ? bulkscore::TieBreak::First : bulkscore::TieBreak::Random;
    eo.seed = o.seed;
    eo.threads = o.threads;
    eo.batching = o.batching == BS_BATCHING_OFF        ? bulkscore::Batching::Off
                  : o.batching == BS_BATCHING_UPSTREAM ? bulkscore::Batching::Upstream
                                                       : bulkscore::Batching::Exact;
    eo.batch_states = o.batch_states;
    eo.assumed_pod_ttl_seconds = o.assumed_pod_ttl_seconds;
    if (o.executor) eo.executor = o.executor->executor;
    auto h = std::make_unique<bs_engine>();
    h->engine = std::make_unique<bulkscore::Engine>(std::move(config), eo);
    for (std::string& w : h->engine->take_warnings()) h->warnings.push_back(std::move(w));
    *out = h.release();
    return static_cast<int>(BS_OK);
  });
}

int bs_executor_create(unsigned threads, bs_executor** out) {
  BS_REQUIRE(out, "bs_executor_create: out is NULL");
  *out = nullptr;
  return guarded([&] {
    auto h = std::make_unique<bs_executor>();
    h->executor = threads == 1 ? bulkscore::caller_thread_executor() : bulkscore::make_thread_pool(threads);
    *out = h.release();
    return static_cast<int>(BS_OK);
  });
}

void bs_executor_destroy(bs_executor* executor) { delete executor; }

void bs_engine_destroy(bs_engine* engine) {
  try {
    delete engine;
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor's failure has nowhere to go
  }
}

const char* bs_engine_backend(const bs_engine* engine) { return engine ? engine->engine->backend_name() : ""; }

const char* bs_engine_backend_note(const bs_engine* engine) {
  return engine ? engine->engine->backend_note().c_str() : "";
}

int bs_engine_load(bs_engine* engine, const char* nodes_json, size_t nodes_len, const char* pods_json,
                   size_t pods_len, const char* objects_json, size_t objects_len) {
  BS_REQUIRE(engine, "bs_engine_load: engine is NULL");
  BS_REQUIRE(nodes_json && pods_json, "bs_engine_load: nodes_json and pods_json are required");
  return guarded([&] {
    std::vector<bulkscore::Node> nodes = bulkscore::parse_nodes_json(text_of(nodes_json, nodes_len), "nodes");
    std::vector<bulkscore::Pod> pods = bulkscore::parse_pods_json(text_of(pods_json, pods_len), "pods");
    bulkscore::Cluster cluster = bulkscore::assemble_cluster(std::move(nodes), std::move(pods),
                                                             engine->engine->scheduler_names(), "nodes", "pods");
    if (objects_json && objects_len)
      cluster.objects = bulkscore::parse_objects_json(text_of(objects_json, objects_len), "objects");
    for (std::string& w : cluster.warnings) engine->warnings.push_back(std::move(w));
    cluster.pending_pods.clear();
    for (std::string& w : engine->engine->load(std::move(cluster))) engine->warnings.push_back(std::move(w));
    return BS_OK;
  });
}

int bs_engine_take_warnings(bs_engine* engine, char*** out, size_t* count) {
  BS_REQUIRE(engine && out, "bs_engine_take_warnings: engine and out are required");
  return guarded([&] {
    for (std::string& w : engine->engine->take_warnings()) engine->warnings.push_back(std::move(w));
    // One allocation: the pointer array, then the strings.
    size_t bytes = (engine->warnings.size() + 1) * sizeof(char*);
    for (const std::string& w : engine->warnings) bytes += w.size() + 1;
    auto* block = static_cast<char*>(std::malloc(bytes));
    if (!block) throw std::bad_alloc();
    auto** list = reinterpret_cast<char**>(block);
    char* at = block + (engine->warnings.size() + 1) * sizeof(char*);
    for (size_t i = 0; i < engine->warnings.size(); ++i) {
      list[i] = at;
      std::memcpy(at, engine->warnings[i].c_str(), engine->warnings[i].size() + 1);
      at += engine->warnings[i].size() + 1;
    }
    list[engine->warnings.size()] = nullptr;
    if (count) *count = engine->warnings.size();
    engine->warnings.clear();
    *out = list;
    return BS_OK;
  });
}

// ---- events ---------------------------------------------------------------------

int bs_engine_add_node(bs_engine* engine, const char* node_json, size_t len) {
  BS_REQUIRE(engine && node_json, "bs_engine_add_node: engine and node_json are required");
  return guarded([&] { return status_of(engine->engine->add_node(one_node(node_json, len)), engine); });
}

int bs_engine_update_node(bs_engine* engine, const char* node_json, size_t len) {
  BS_REQUIRE(engine && node_json, "bs_engine_update_node: engine and node_json are required");
  return guarded([&] { return status_of(engine->engine->update_node(one_node(node_json, len)), engine); });
}

int bs_engine_remove_node(bs_engine* engine, const char* name) {
  BS_REQUIRE(engine && name, "bs_engine_remove_node: engine and name are required");
  return guarded([&] { return status_of(engine->engine->remove_node(name), engine); });
}

int bs_engine_add_pod(bs_engine* engine, const char* pod_json, size_t len) {
  BS_REQUIRE(engine && pod_json, "bs_engine_add_pod: engine and pod_json are required");
  return guarded([&] { return status_of(engine->engine->add_pod(one_pod(pod_json, len)), engine); });
}

int bs_engine_update_pod(bs_engine* engine, const char* pod_json, size_t len) {
  BS_REQUIRE(engine && pod_json, "bs_engine_update_pod: engine and pod_json are required");
  return guarded([&] { return status_of(engine->engine->update_pod(one_pod(pod_json, len)), engine); });
}

int bs_engine_remove_pod(bs_engine* engine, const char* cache_key) {
  BS_REQUIRE(engine && cache_key, "bs_engine_remove_pod: engine and cache_key are required");
  return guarded([&] { return status_of(engine->engine->remove_pod(cache_key), engine); });
}

int bs_engine_assume_pod(bs_engine* engine, const char* pod_json, size_t len) {
  BS_REQUIRE(engine && pod_json, "bs_engine_assume_pod: engine and pod_json are required");
  return guarded([&] { return status_of(engine->engine->assume_pod(one_pod(pod_json, len)), engine); });
}

int bs_engine_remove_pending_pod(bs_engine* engine, const char* cache_key) {
  BS_REQUIRE(engine && cache_key, "bs_engine_remove_pending_pod: engine and cache_key are required");
  return guarded([&] { return status_of(engine->engine->remove_pending_pod(cache_key), engine); });
}

int bs_engine_forget_pod(bs_engine* engine, const char* cache_key) {
  BS_REQUIRE(engine && cache_key, "bs_engine_forget_pod: engine and cache_key are required");
  return guarded([&] { return status_of(engine->engine->forget_pod(cache_key), engine); });
}

int bs_engine_finish_binding(bs_engine* engine, const char* cache_key) {
  BS_REQUIRE(engine && cache_key, "bs_engine_finish_binding: engine and cache_key are required");
  return guarded([&] { return status_of(engine->engine->finish_binding(cache_key), engine); });
}

int bs_engine_is_assumed_pod(const bs_engine* engine, const char* cache_key, int* out) {
  BS_REQUIRE(engine && cache_key && out, "bs_engine_is_assumed_pod: engine, cache_key and out are required");
  return guarded([&] {
    *out = engine->engine->is_assumed_pod(cache_key) ? 1 : 0;
    return BS_OK;
  });
}

int bs_engine_add_object(bs_engine* engine, const char* object_json, size_t len) {
  BS_REQUIRE(engine && object_json, "bs_engine_add_object: engine and object_json are required");
  return guarded([&] {
    return with_one_object(engine, object_json, len, [&](const auto& obj) { return engine->engine->add_object(obj); });
  });
}

int bs_engine_update_object(bs_engine* engine, const char* object_json, size_t len) {
  BS_REQUIRE(engine && object_json, "bs_engine_update_object: engine and object_json are required");
  return guarded([&] {
    return with_one_object(engine, object_json, len,
                           [&](const auto& obj) { return engine->engine->update_object(obj); });
  });
}

int bs_engine_remove_object(bs_engine* engine, const char* kind, const char* namespace_name, const char* name) {
  BS_REQUIRE(engine && kind && name, "bs_engine_remove_object: engine, kind and name are required");
  return guarded([&] {
    using bulkscore::ObjectKind;
    const std::string_view k = kind;
    ObjectKind ok = ObjectKind::kNamespace;
    if (k == "Namespace")
      ok = ObjectKind::kNamespace;
    else if (k == "Service")
      ok = ObjectKind::kService;
    else if (k == "ReplicationController")
      ok = ObjectKind::kReplicationController;
    else if (k == "ReplicaSet")
      ok = ObjectKind::kReplicaSet;
    else if (k == "StatefulSet")
      ok = ObjectKind::kStatefulSet;
    else if (k == "SharedDeviceGroup")
      ok = ObjectKind::kSharedDeviceGroup;
    else if (k == "PriorityClass")
      ok = ObjectKind::kPriorityClass;
    else if (k == "PodDisruptionBudget")
      ok = ObjectKind::kPodDisruptionBudget;
    else if (k == "Workload")
      ok = ObjectKind::kWorkload;
    else if (k == "PodGroup.scheduling.k8s.io")
      ok = ObjectKind::kPodGroup;
    else if (k == "PodGroup.scheduling.x-k8s.io")
      ok = ObjectKind::kCoschedulingPodGroup;
    else if (k == "PodGroup")
      // Two resources share the kind (and may share a name): the API group
      // says which.
      return fail(BS_INVALID_ARGUMENT,
                  "bs_engine_remove_object: kind \"PodGroup\" is ambiguous: \"PodGroup.scheduling.k8s.io\" "
                  "(v1alpha2) or \"PodGroup.scheduling.x-k8s.io\" (Coscheduling)");
    else
      return fail(BS_INVALID_ARGUMENT, "bs_engine_remove_object: unknown kind \"" + std::string(k) + "\"");
    return status_of(engine->engine->remove_object(ok, namespace_name ? namespace_name : "", name), engine);
  });
}

// ---- node data --------------------------------------------------------------------------

int bs_engine_set_node_filter(bs_engine* engine, const char* column, const char* node, int pass, const char* reason) {
  BS_REQUIRE(engine && column && node, "bs_engine_set_node_filter: engine, column and node are required");
  return guarded([&] {
    return status_of(engine->engine->set_node_filter(column, node, pass != 0, reason ? reason : ""), engine);
  });
}

int bs_engine_set_node_filters(bs_engine* engine, const char* column, const char* const* nodes, const int* pass,
                               const char* const* reasons, size_t count) {
  BS_REQUIRE(engine && column, "bs_engine_set_node_filters: engine and column are required");
  BS_REQUIRE(count == 0 || (nodes && pass), "bs_engine_set_node_filters: nodes and pass are required");
  return guarded([&] {
    std::vector<bulkscore::NodeFilterValue> values(count);
    for (size_t i = 0; i < count; ++i) {
      BS_REQUIRE(nodes[i], "bs_engine_set_node_filters: nodes[" + std::to_string(i) + "] is NULL");
      values[i].node = nodes[i];
      values[i].pass = pass[i] != 0;
      if (!values[i].pass && reasons && reasons[i]) values[i].reason = reasons[i];
    }
    return status_of(engine->engine->set_node_filters(column, values), engine);
  });
}

int bs_engine_set_node_score(bs_engine* engine, const char* column, const char* node, int64_t score) {
  BS_REQUIRE(engine && column && node, "bs_engine_set_node_score: engine, column and node are required");
  return guarded([&] { return status_of(engine->engine->set_node_score(column, node, score), engine); });
}

int bs_engine_set_node_scores(bs_engine* engine, const char* column, const char* const* nodes, const int64_t* scores,
                              size_t count) {
  BS_REQUIRE(engine && column, "bs_engine_set_node_scores: engine and column are required");
  BS_REQUIRE(count == 0 || (nodes && scores), "bs_engine_set_node_scores: nodes and scores are required");
  return guarded([&] {
    std::vector<bulkscore::NodeScoreValue> values(count);
    for (size_t i = 0; i < count; ++i) {
      BS_REQUIRE(nodes[i], "bs_engine_set_node_scores: nodes[" + std::to_string(i) + "] is NULL");
      values[i].node = nodes[i];
      values[i].score = scores[i];
    }
    return status_of(engine->engine->set_node_scores(column, values), engine);
  });
}

int bs_engine_clear_node_data(bs_engine* engine, const char* column, const char* node) {
  BS_REQUIRE(engine && column, "bs_engine_clear_node_data: engine and column are required");
  return guarded([&] {
    return status_of(node ? engine->engine->clear_node_data(column, node) : engine->engine->clear_node_data(column),
                     engine);
  });
}

// ---- decisions ------------------------------------------------------------------------

int bs_engine_schedule(bs_engine* engine, const char* pod_json, size_t len, bs_schedule_result** out) {
  BS_REQUIRE(engine && pod_json && out, "bs_engine_schedule: engine, pod_json and out are required");
  *out = nullptr;
  return guarded([&] { return make_schedule_result(engine->engine->schedule(one_pod(pod_json, len)), out); });
}

int bs_engine_peek(bs_engine* engine, const char* pod_json, size_t len, bs_schedule_result** out) {
  BS_REQUIRE(engine && pod_json && out, "bs_engine_peek: engine, pod_json and out are required");
  *out = nullptr;
  return guarded([&] { return make_schedule_result(engine->engine->peek(one_pod(pod_json, len)), out); });
}

void bs_schedule_result_free(bs_schedule_result* result) {
  if (!result) return;
  delete static_cast<ScheduleHolder*>(reinterpret_cast<Box<bs_schedule_result>*>(result)->owner);
}

int bs_engine_set_window(bs_engine* engine, uint32_t window) {
  BS_REQUIRE(engine, "bs_engine_set_window: engine is NULL");
  return guarded([&] {
    engine->engine->set_window(window);
    return BS_OK;
  });
}

int bs_engine_schedule_all(bs_engine* engine, const char* pods_json, size_t len, bs_schedule_results** out) {
  BS_REQUIRE(engine && pods_json && out, "bs_engine_schedule_all: engine, pods_json and out are required");
  *out = nullptr;
  return guarded([&] {
    std::vector<bulkscore::Pod> pods = bulkscore::parse_pods_json(text_of(pods_json, len), "pods");
    std::vector<bulkscore::ScheduleResult> results = engine->engine->schedule_all(std::move(pods));
    auto h = std::make_unique<ScheduleResultsHolder>();
    h->results.reserve(results.size());
    h->pointers.reserve(results.size());
    for (bulkscore::ScheduleResult& r : results) {
      h->results.push_back(schedule_holder(std::move(r)));
      h->pointers.push_back(&h->results.back()->box.pub);
    }
    bs_schedule_results& p = h->box.pub;
    p.results = h->pointers.data();
    p.count = h->pointers.size();
    h->box.owner = h.get();
    *out = &h.release()->box.pub;
    return BS_OK;
  });
}

void bs_schedule_results_free(bs_schedule_results* results) {
  if (!results) return;
  delete static_cast<ScheduleResultsHolder*>(reinterpret_cast<Box<bs_schedule_results>*>(results)->owner);
}

int bs_engine_pod_group_status(const bs_engine* engine, const char* pod_json, size_t len, const char* pending_json,
                               size_t pending_len, char** out) {
  BS_REQUIRE(engine && pod_json && out, "bs_engine_pod_group_status: engine, pod_json and out are required");
  *out = nullptr;
  return guarded([&] {
    const bulkscore::Pod pod = one_pod(pod_json, len);
    const std::vector<bulkscore::Pod> pending =
        pending_json && pending_len ? bulkscore::parse_pods_json(text_of(pending_json, pending_len), "pending")
                                    : std::vector<bulkscore::Pod>{};
    std::string text;
    bulkscore::append_pod_group_status_json(engine->engine->pod_group_status(pod, pending), text);
    auto* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out = copy;
    return BS_OK;
  });
}

int bs_engine_rank(bs_engine* engine, const char* pod_json, size_t len, uint32_t k, bs_ranking** out) {
  BS_REQUIRE(engine && pod_json && out, "bs_engine_rank: engine, pod_json and out are required");
  *out = nullptr;
  return guarded([&] {
    auto h = std::make_unique<RankingHolder>();
    h->r = engine->engine->rank(one_pod(pod_json, len), k);
    const bulkscore::Ranking& r = h->r;
    for (const std::string& p : r.score_plugins) h->plugins.push_back(p.c_str());
    for (const bulkscore::RankedNode& n : r.nodes)
      h->nodes.push_back(bs_ranked_node{n.name.c_str(), n.total, n.raw.data(), n.weighted.data()});
    for (const bulkscore::RejectionCount& c : r.rejections)
      h->rejections.push_back(bs_rejection{c.plugin.c_str(), c.reason.c_str(), c.nodes});
    bulkscore::append_ranking_json(r, h->json);
    bs_ranking& p = h->box.pub;
    p.pod = r.pod.c_str();
    p.plugins = h->plugins.data();
    p.num_plugins = h->plugins.size();
    p.nodes = h->nodes.data();
    p.num_nodes = h->nodes.size();
    p.evaluated_nodes = r.evaluated_nodes;
    p.feasible_nodes = r.feasible_nodes;
    p.tied_at_best = r.tied_at_best;
    p.chosen = r.chosen.c_str();
    p.rejections = h->rejections.data();
    p.num_rejections = h->rejections.size();
    p.message = r.message.c_str();
    p.json = h->json.c_str();
    h->box.owner = h.get();
    *out = &h.release()->box.pub;
    return BS_OK;
  });
}

void bs_ranking_free(bs_ranking* ranking) {
  if (!ranking) return;
  delete static_cast<RankingHolder*>(reinterpret_cast<Box<bs_ranking>*>(ranking)->owner);
}

int bs_engine_metrics_text(const bs_engine* engine, char** out) {
  BS_REQUIRE(engine && out, "bs_engine_metrics_text: engine and out are required");
  return guarded([&] {
    const std::string text = engine->engine->metrics_text();
    auto* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out = copy;
    return BS_OK;
  });
}

}  // extern "C"
