/* bulkscore's C ABI (C11): kube-scheduler v1.35.4's scheduling cycle in
 * bulk, for schedulers written in Go (cgo), Rust, Python (ctypes), C or any
 * language with a C FFI. docs/library.md has the lifecycle and examples.
 *
 * The rules, as FAISS's C API has them:
 *  - Objects are opaque handles (bs_engine) or library-made result structs,
 *    freed by the library that made them (bs_engine_destroy,
 *    bs_schedule_result_free, bs_ranking_free, bs_free).
 *  - Every call that can fail returns an int status (bs_status): BS_OK, or
 *    a code whose message bs_last_error() gives on the same thread until
 *    the thread's next failing call. No C++ exception crosses this ABI.
 *  - Kubernetes objects go in as kubectl JSON (one object, or a List of
 *    them where a call says so), byte strings with a length; names and keys
 *    as NUL-terminated UTF-8.
 *  - One engine is used by one thread at a time (the caller serializes its
 *    calls); different engines are independent and may run concurrently.
 *
 * Every function of this header is exported from libbulkscore.so; nothing
 * else is. BULKSCORE_ABI_VERSION changes (with the SONAME) only when a
 * declaration here changes incompatibly. */
#ifndef BULKSCORE_BULKSCORE_H
#define BULKSCORE_BULKSCORE_H

#include <stddef.h>
#include <stdint.h>

#include "bulkscore/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BS_API __attribute__((visibility("default")))
#else
#define BS_API
#endif

/* ---- status ------------------------------------------------------------ */

typedef enum bs_status {
  BS_OK = 0,
  BS_INVALID_INPUT = 1,        /* malformed JSON/YAML, a refused object or pod (message names it) */
  BS_ALREADY_EXISTS = 2,       /* an add of an object the engine holds */
  BS_NOT_FOUND = 3,            /* an update, removal, forget... of one it does not hold */
  BS_WRONG_STATE = 4,          /* e.g. an update of an assumed pod, a forget of a bound one */
  BS_BACKEND_UNAVAILABLE = 5,  /* the backend asked for cannot run here (no CUDA, no device) */
  BS_DEVICE_ERROR = 6,         /* a CUDA failure the engine could not fall back from */
  BS_OUT_OF_MEMORY = 7,
  BS_INVALID_ARGUMENT = 8,     /* a NULL handle or pointer, a bad enum value */
  BS_INTERNAL = 9              /* anything else: a bug to report */
} bs_status;

/* The message of this thread's last failing call ("" if none); valid until
 * the thread's next failing call. */
BS_API const char* bs_last_error(void);
/* "bs_status" as text: "BS_NOT_FOUND". */
BS_API const char* bs_status_name(int status);

/* The library's version ("0.1.0") and ABI version, to check against the
 * header's BULKSCORE_VERSION and BULKSCORE_ABI_VERSION at run time. */
BS_API const char* bs_version(void);
BS_API int bs_abi_version(void);

/* Frees a string or array the library returned (bs_engine_metrics_text...). */
BS_API void bs_free(void* p);

/* ---- the engine ----------------------------------------------------------- */

typedef struct bs_engine bs_engine;

/* Where engines run their CPU loops (docs/library.md, "Threads"): a pool
 * made once and shared by several engines (each keeps it alive as long as
 * it needs it: destroying the handle early is safe). threads 0: one per
 * core; 1: no worker thread, every job on its caller's thread. */
typedef struct bs_executor bs_executor;
BS_API int bs_executor_create(unsigned threads, bs_executor** out);
BS_API void bs_executor_destroy(bs_executor* executor);

typedef enum bs_tie_break { BS_TIE_BREAK_RANDOM = 0, BS_TIE_BREAK_FIRST = 1 } bs_tie_break;
typedef enum bs_batching { BS_BATCHING_EXACT = 0, BS_BATCHING_UPSTREAM = 1, BS_BATCHING_OFF = 2 } bs_batching;

typedef struct bs_engine_options {
  const char* backend;        /* "auto" (or NULL), "cpu", "cuda" */
  int tie_break;              /* bs_tie_break; upstream's random by default */
  uint64_t seed;              /* of the random tie-break */
  int threads;                /* CPU backend workers; 0: one per core */
  int batching;               /* bs_batching; exact (decisions unchanged) by default */
  uint32_t batch_states;      /* exact batching: evaluations kept (>= 1) */
  double assumed_pod_ttl_seconds; /* 0: assumed pods never expire (upstream's default) */
  bs_executor* executor;      /* NULL: a pool of `threads` of the engine's own */
} bs_engine_options;

/* The defaults: backend auto, random tie-break, seed 0, one thread per
 * core, exact batching with one state, no expiry. */
BS_API void bs_engine_options_init(bs_engine_options* options);

/* An engine for a KubeSchedulerConfiguration (YAML text; NULL or length 0:
 * upstream's default profile) and options (NULL: the defaults). */
BS_API int bs_engine_create(const char* config_yaml, size_t config_len, const bs_engine_options* options,
                            bs_engine** out);
BS_API void bs_engine_destroy(bs_engine* engine);
/* "cpu" or "cuda": the backend the engine runs on now (it may have fallen
 * back to the CPU), and why, e.g. "auto: CUDA device found". */
BS_API const char* bs_engine_backend(const bs_engine* engine);
BS_API const char* bs_engine_backend_note(const bs_engine* engine);

/* Replaces the whole cluster: nodes (a NodeList, or one Node), pods (a
 * PodList) and objects (a List of Services, ReplicationControllers,
 * ReplicaSets, StatefulSets, Namespaces, SharedDeviceGroups,
 * PriorityClasses, PodDisruptionBudgets, Workloads and PodGroups; NULL for
 * none). Of the pods, those bound to a node are loaded (as running pods);
 * the others are not kept. */
BS_API int bs_engine_load(bs_engine* engine, const char* nodes_json, size_t nodes_len, const char* pods_json,
                          size_t pods_len, const char* objects_json, size_t objects_len);

/* The warnings the engine gathered since the last call (load, events,
 * backend fallbacks), as a NULL-terminated array of strings; *count gets
 * their number. Free the array with bs_free (one call frees it all). */
BS_API int bs_engine_take_warnings(bs_engine* engine, char*** out, size_t* count);

/* ---- events: kube-scheduler's cache, one informer event at a time -----------
 * Nodes are known by name; pods by their cache key: metadata.uid, or
 * "namespace/name" for a pod without one; objects by kind, namespace and
 * name. An add of a present object, an update or removal of an absent one
 * returns BS_ALREADY_EXISTS / BS_NOT_FOUND and changes nothing. Warnings
 * (bs_engine_take_warnings) say what else the caller should know. */

BS_API int bs_engine_add_node(bs_engine* engine, const char* node_json, size_t len);
BS_API int bs_engine_update_node(bs_engine* engine, const char* node_json, size_t len);
BS_API int bs_engine_remove_node(bs_engine* engine, const char* name);

/* The informer's add of a bound pod; for a pod the engine assumed, its
 * confirmation. */
BS_API int bs_engine_add_pod(bs_engine* engine, const char* pod_json, size_t len);
BS_API int bs_engine_update_pod(bs_engine* engine, const char* pod_json, size_t len);
BS_API int bs_engine_remove_pod(bs_engine* engine, const char* cache_key);
/* The pod (spec.nodeName set) placed without a decision. */
BS_API int bs_engine_assume_pod(bs_engine* engine, const char* pod_json, size_t len);
BS_API int bs_engine_forget_pod(bs_engine* engine, const char* cache_key);
BS_API int bs_engine_finish_binding(bs_engine* engine, const char* cache_key);
/* The informer's delete of a pod that is not bound: a pod whose last
 * schedule failed stops counting as pending and unschedulable in the
 * metrics; BS_NOT_FOUND when none of that key is counted. */
BS_API int bs_engine_remove_pending_pod(bs_engine* engine, const char* cache_key);
/* *out = 1 when the pod is assumed (not yet confirmed), else 0. */
BS_API int bs_engine_is_assumed_pod(const bs_engine* engine, const char* cache_key, int* out);

/* Objects: one Service, ReplicationController, ReplicaSet, StatefulSet,
 * Namespace, SharedDeviceGroup, PriorityClass, PodDisruptionBudget,
 * Workload (scheduling.k8s.io/v1alpha1) or PodGroup (scheduling.k8s.io/
 * v1alpha2, or Coscheduling's scheduling.x-k8s.io/v1alpha1) as JSON.
 * Removal by kind ("Service", ..., "PriorityClass", "PodDisruptionBudget",
 * "Workload", and for the two PodGroup resources, which may share a name,
 * the kind with its API group: "PodGroup.scheduling.k8s.io",
 * "PodGroup.scheduling.x-k8s.io"; a plain "PodGroup" is
 * BS_INVALID_ARGUMENT), namespace ("" or NULL for the cluster-scoped kinds)
 * and name. A pending pod's priority is resolved from the PriorityClasses
 * held when it is scheduled; a gang's group when its members are taken
 * (bs_engine_schedule_all): a Workload's podGroups are added, replaced and
 * removed together, and the pods held keep their placements. */
BS_API int bs_engine_add_object(bs_engine* engine, const char* object_json, size_t len);
BS_API int bs_engine_update_object(bs_engine* engine, const char* object_json, size_t len);
BS_API int bs_engine_remove_object(bs_engine* engine, const char* kind, const char* namespace_name,
                                   const char* name);

/* ---- node data: the NodeData plugin's columns ---------------------------------
 * The embedder's own per-node data (a license, a maintenance window, a
 * cost model), which profiles read through the NodeData plugin
 * (docs/plugins.md): a filter column holds per node a pass or a fail with a
 * reason text (FitError messages and explain show it; at most 63 distinct
 * reasons in use per column), a score column a score 0..100. A column is
 * made by its first set (a filter and a score column cannot share a name;
 * names are qualified names, as label keys). Nodes by name: an unknown node
 * is BS_NOT_FOUND; a bad column name, a column of the other kind, a score
 * out of range, a node given twice or a reason with control characters
 * (or over 256 bytes) is BS_INVALID_INPUT, and nothing changes. Nodes added
 * later have no data; a node's data survives its updates and goes with its
 * removal. */

/* reason: the fail's reason text (NULL or "": "node(s) didn't pass
 * <column>"); ignored when pass is nonzero. */
BS_API int bs_engine_set_node_filter(bs_engine* engine, const char* column, const char* node, int pass,
                                     const char* reason);
/* count nodes at once, all or nothing: nodes[i] passes when pass[i] is
 * nonzero, else fails with reasons[i] (reasons NULL, or reasons[i] NULL or
 * "": the default text). */
BS_API int bs_engine_set_node_filters(bs_engine* engine, const char* column, const char* const* nodes,
                                      const int* pass, const char* const* reasons, size_t count);
BS_API int bs_engine_set_node_score(bs_engine* engine, const char* column, const char* node, int64_t score);
BS_API int bs_engine_set_node_scores(bs_engine* engine, const char* column, const char* const* nodes,
                                     const int64_t* scores, size_t count);
/* The node's entry removed (it then has no data in the column); node NULL:
 * every node's. BS_NOT_FOUND for an unknown column or node. */
BS_API int bs_engine_clear_node_data(bs_engine* engine, const char* column, const char* node);

/* ---- decisions ----------------------------------------------------------------- */

typedef struct bs_schedule_result {
  const char* pod;          /* namespace/name */
  const char* node;         /* the node chosen; "" when not placed */
  int64_t score;            /* its weighted total (0 when it was the only feasible node) */
  uint32_t feasible_nodes;
  int code;                 /* 0 placed; else 1 Error, 2 Unschedulable, 3 UnschedulableAndUnresolvable */
  const char* code_name;    /* "Success", "Unschedulable", ... */
  const char* message;      /* upstream's FitError text when not placed */
  const int32_t* devices;   /* GpuShare: the device indices taken, ascending */
  size_t num_devices;
  const char* device_group; /* SharedDeviceGroup: the group ("" none) */
  const char* const* warnings;
  size_t num_warnings;
  const char* json;         /* the line `bulkscore schedule` writes for it (no newline) */
  /* DefaultPreemption (appended: the struct grows at its end only): the
   * node the pod preempted on ("" when it did not), the pods evicted for it
   * (namespace/name, sorted) and how many of those evictions a
   * PodDisruptionBudget protected. After preempting, the pod is placed on
   * that node (node equals nominated_node) or, rarely, still unschedulable. */
  const char* nominated_node;
  const char* const* victims;
  size_t num_victims;
  int64_t pdb_violations;
  /* Gang scheduling (appended; bs_engine_schedule_all, docs/plugins.md "Pod
   * groups"): the member's group, "ns/name" (PodGroup) or
   * "ns/workload/podGroup[/replicaKey]" (Workload), "" for a pod in no
   * gang; and its verdict, "admitted" (the placements stand; a member that
   * found no node has its own message) or "rejected" (no member placed;
   * each Unschedulable with the group's message), "" for a pod in no gang. */
  const char* pod_group;
  const char* group_outcome;
  /* A topology-aware gang admitted in one domain (appended; docs/plugins.md
   * "Topology-aware gangs"): "key=value", else "". */
  const char* group_domain;
} bs_schedule_result;

/* Filter, score, select and assume `pod` (JSON of one Pod). A pod the
 * engine holds already is not scheduled again (code 1, a message). The
 * result stays valid until bs_schedule_result_free. */
BS_API int bs_engine_schedule(bs_engine* engine, const char* pod_json, size_t len, bs_schedule_result** out);
/* The decision schedule would take now, every node scored; nothing assumed. */
BS_API int bs_engine_peek(bs_engine* engine, const char* pod_json, size_t len, bs_schedule_result** out);
BS_API void bs_schedule_result_free(bs_schedule_result* result);

/* The results of bs_engine_schedule_all: one per pod, in the order of the
 * PodList's items. Pointers, not an array of structs, so that
 * bs_schedule_result can keep growing at its end. Freed as a whole by
 * bs_schedule_results_free (not one by one). */
typedef struct bs_schedule_results {
  const bs_schedule_result* const* results;
  size_t count;
} bs_schedule_results;

/* Schedules the pending pods of `pods_json` (a PodList) as kube-scheduler's
 * queue takes them, gangs all or nothing (docs/plugins.md "Pod groups"):
 * ordinary pods in list order, one by one as bs_engine_schedule; a gang's
 * pending members together at its first member's place, each placed in turn
 * and every placement undone when fewer than the group's minimum fit (or
 * all rejected before any is tried: the group's object missing, too few
 * pods, Coscheduling's minResources). Gang members do not preempt. A pod
 * the engine refuses (BS_INVALID_INPUT, the message names it) ends the run
 * there: no results; the pods before it in queue order keep their
 * placements (bs_engine_is_assumed_pod tells), its gang's are undone. */
BS_API int bs_engine_schedule_all(bs_engine* engine, const char* pods_json, size_t len, bs_schedule_results** out);
BS_API void bs_schedule_results_free(bs_schedule_results* results);

/* Windows of pods for bs_engine_schedule_all (docs/batching.md, "Windows
 * of pods"): the next `window` ordinary pods of its queue are evaluated
 * together ahead of their turn and kept for it, with exact batching. 0
 * (the default): auto, two pods per thread (8 to 64) on a CPU backend of
 * four threads or more while they pay; 1: none. Decisions do not depend on
 * it. */
BS_API int bs_engine_set_window(bs_engine* engine, uint32_t window);

/* The pod group `pod` (JSON of one Pod) belongs to, as
 * bs_engine_schedule_all would find it now with the pods of `pending_json`
 * (a PodList, NULL for none: the pending pods, the pod among them if it is
 * pending) still to schedule: explain's "podGroup" object, as JSON,
 * {"name": key, "api", "minField", "min", "placed", "pending",
 * "rejection": null or the early rejection's message}, without "api" to
 * "pending" when the group's object is missing; "null" for a pod in no
 * gang. Nothing changes. Free *out with bs_free. */
BS_API int bs_engine_pod_group_status(const bs_engine* engine, const char* pod_json, size_t len,
                                      const char* pending_json, size_t pending_len, char** out);

typedef struct bs_ranked_node {
  const char* node;
  int64_t total;
  const int64_t* raw;      /* [num_plugins]: each Score plugin's raw score */
  const int64_t* weighted; /* [num_plugins]: normalized times weight; they sum to total */
} bs_ranked_node;

typedef struct bs_rejection {
  const char* plugin; /* "" for the nodes outside a PreFilterResult */
  const char* reason; /* upstream's FitError reason text */
  uint64_t nodes;
} bs_rejection;

typedef struct bs_ranking {
  const char* pod;
  const char* const* plugins; /* the profile's Score plugins, in order */
  size_t num_plugins;
  const bs_ranked_node* nodes; /* the best first: total descending, then node order */
  size_t num_nodes;
  uint32_t evaluated_nodes;
  uint32_t feasible_nodes;
  uint32_t tied_at_best;       /* feasible nodes sharing the best total */
  const char* chosen;          /* the node schedule would pick now ("" none) */
  const bs_rejection* rejections; /* most nodes first */
  size_t num_rejections;
  const char* message;         /* the FitError text when no node fits */
  const char* json;            /* all of it as one JSON object */
} bs_ranking;

/* The k best feasible nodes for `pod` now, with their scores; nothing
 * assumed. */
BS_API int bs_engine_rank(bs_engine* engine, const char* pod_json, size_t len, uint32_t k, bs_ranking** out);
BS_API void bs_ranking_free(bs_ranking* ranking);

/* ---- metrics -------------------------------------------------------------------- */

/* The engine's metrics in Prometheus text format: kube-scheduler's
 * (scheduler_schedule_attempts_total, the durations, unschedulable and
 * pending pods) with upstream's names and labels, bulkscore_build_info and
 * the batch cache's counters (docs/library.md, "Metrics"); free with bs_free. */
BS_API int bs_engine_metrics_text(const bs_engine* engine, char** out);

#ifdef __cplusplus
}
#endif

#endif /* BULKSCORE_BULKSCORE_H */
